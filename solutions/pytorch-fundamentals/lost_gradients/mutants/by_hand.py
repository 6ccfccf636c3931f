# misconception: by_hand
"""Misconception: computes the intermediate gradient by hand (4 * w) instead of obtaining it
from autograd, which is the point of the exercise."""

CHANGE = r'''
@@ -12,5 +12,1 @@ def intermediate_grad(w):
-    w2 = w * 2
-    w2.retain_grad()
-    loss = (w2**2).sum()
-    loss.backward()
-    return w2.grad
+    return 4 * w.detach()
'''
