# misconception: uses_autograd
"""Misconception: mlp_backward calls autograd (requires_grad_ + backward) instead of the hand
derivation; it breaks when gradient recording is off."""

CHANGE = r'''
@@ -5,3 +5,1 @@ def mlp_forward(X, W1, b1, W2, b2):
-    A = X @ W1 + b1
-    H = torch.relu(A)
-    return H @ W2 + b2
+    return torch.relu(X @ W1 + b1) @ W2 + b2
@@ -34,3 +32,4 @@ def mlp_backward(X, y, W1, b1, W2, b2):
-    with torch.no_grad():
-        _, grads = _forward_backward(X, y, W1, b1, W2, b2)
-    return {k: grads[k] for k in ("W1", "b1", "W2", "b2")}
+    params = [p.detach().clone().requires_grad_(True) for p in (W1, b1, W2, b2)]
+    loss = F.cross_entropy(mlp_forward(X, *params), y)
+    loss.backward()
+    return dict(zip(("W1", "b1", "W2", "b2"), (p.grad for p in params)))
@@ -53,1 +52,18 @@ def mlp_loss(X, y, W1, b1, W2, b2):
-    return _MLPLoss.apply(X, y, W1, b1, W2, b2)
+    return _Loss.apply(X, y, W1, b1, W2, b2)
+
+
+import torch.nn.functional as F
+
+
+class _Loss(torch.autograd.Function):
+    @staticmethod
+    def forward(ctx, X, y, W1, b1, W2, b2):
+        ctx.save_for_backward(X, y, W1, b1, W2, b2)
+        return F.cross_entropy(mlp_forward(X, W1, b1, W2, b2), y)
+
+    @staticmethod
+    def backward(ctx, g):
+        X, y, W1, b1, W2, b2 = ctx.saved_tensors
+        with torch.enable_grad():
+            grads = mlp_backward(X, y, W1, b1, W2, b2)
+        return None, None, g * grads["W1"], g * grads["b1"], g * grads["W2"], g * grads["b2"]
'''
