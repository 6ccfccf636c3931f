# misconception: bias_mean
"""Misconception: averages the bias gradients over the batch although dZ already carries the 1/n
(mean instead of sum)."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-        "b2": dZ.sum(dim=0),
+        "b2": dZ.mean(dim=0),
@@ -29,1 +29,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    grads["b1"] = dA.sum(dim=0)
+    grads["b1"] = dA.mean(dim=0)
'''
