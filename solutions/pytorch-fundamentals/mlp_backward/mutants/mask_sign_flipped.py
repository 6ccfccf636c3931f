# misconception: mask_inverted
"""Misconception: the ReLU mask is taken where A <= 0 (the gradient flows through the inactive units)."""

CHANGE = r'''
@@ -27,1 +27,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    dA = dH * (A > 0).to(dH.dtype)
+    dA = dH * (A <= 0).to(dH.dtype)
'''
