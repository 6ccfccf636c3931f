# misconception: sum_not_square
"""Misconception: intermediate_grad backpropagates w2.sum() instead of the loss (w2 ** 2).sum(), so the gradient
it returns is all ones."""

CHANGE = r'''
@@ -14,2 +14,1 @@ def intermediate_grad(w):
-    loss = (w2**2).sum()
-    loss.backward()
+    w2.sum().backward()
'''
