# misconception: transposed_layout
"""Misconception: lays the weight gradients out like nn.Linear.weight (out, in), i.e. transposed
with respect to W1 (d, h) and W2 (h, C)."""

CHANGE = r'''
@@ -23,1 +23,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-        "W2": H.T @ dZ,
+        "W2": dZ.T @ H,
@@ -28,1 +28,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    grads["W1"] = X.T @ dA
+    grads["W1"] = dA.T @ X
'''
