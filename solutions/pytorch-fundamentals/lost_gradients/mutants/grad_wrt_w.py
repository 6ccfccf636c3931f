# misconception: grad_wrt_leaf
"""Misconception: returns the gradient with respect to the leaf w (w.grad) instead of the
intermediate w2 = w * 2; the chain rule makes it twice too large."""

CHANGE = r'''
@@ -13,1 +13,0 @@ def intermediate_grad(w):
-    w2.retain_grad()
@@ -16,1 +15,1 @@ def intermediate_grad(w):
-    return w2.grad
+    return w.grad
'''
