# misconception: modifies_input
"""Misconception: W2.t_() used for W2.T: the trailing underscore transposes the caller's W2 in place."""

CHANGE = r'''
@@ -34,3 +34,13 @@ def mlp_backward(X, y, W1, b1, W2, b2):
-    with torch.no_grad():
-        _, grads = _forward_backward(X, y, W1, b1, W2, b2)
-    return {k: grads[k] for k in ("W1", "b1", "W2", "b2")}
+    n = X.shape[0]
+    A = X @ W1 + b1
+    H = torch.relu(A)
+    Z = H @ W2 + b2
+    Zs = Z - Z.max(dim=1, keepdim=True).values
+    dZ = torch.exp(Zs) / torch.exp(Zs).sum(dim=1, keepdim=True)
+    dZ[torch.arange(n), y] -= 1
+    dZ = dZ / n
+    grads = {"W2": H.T @ dZ, "b2": dZ.sum(dim=0)}
+    dA = (dZ @ W2.t_()) * (A > 0).to(dZ.dtype)
+    grads["W1"] = X.T @ dA
+    grads["b1"] = dA.sum(dim=0)
+    return grads
'''
