# misconception: no_relu_mask
"""Misconception: backpropagates through ReLU as if it were the identity (the mask (A > 0) is missing)."""

CHANGE = r'''
@@ -27,1 +27,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    dA = dH * (A > 0).to(dH.dtype)
+    dA = dH
'''
