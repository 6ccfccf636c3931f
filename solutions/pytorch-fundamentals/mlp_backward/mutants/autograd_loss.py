# misconception: not_custom_function
"""Misconception: mlp_loss returns plain F.cross_entropy(mlp_forward(...)) and lets autograd do
the work, instead of a custom torch.autograd.Function with the hand-derived backward."""

CHANGE = r'''
@@ -34,3 +34,9 @@ def mlp_backward(X, y, W1, b1, W2, b2):
-    with torch.no_grad():
-        _, grads = _forward_backward(X, y, W1, b1, W2, b2)
-    return {k: grads[k] for k in ("W1", "b1", "W2", "b2")}
+    n = X.shape[0]
+    A = X @ W1 + b1
+    H = torch.relu(A)
+    Z = H @ W2 + b2
+    dZ = torch.softmax(Z, dim=1)
+    dZ[torch.arange(n), y] -= 1
+    dZ = dZ / n
+    dA = (dZ @ W2.T) * (A > 0)
+    return {"W1": X.T @ dA, "b1": dA.sum(0), "W2": H.T @ dZ, "b2": dZ.sum(0)}
@@ -53,1 +59,4 @@ def mlp_loss(X, y, W1, b1, W2, b2):
-    return _MLPLoss.apply(X, y, W1, b1, W2, b2)
+    return F.cross_entropy(mlp_forward(X, W1, b1, W2, b2), y)
+
+
+import torch.nn.functional as F
'''
