# misconception: not_retained
"""Misconception: reads .grad of the non-leaf w2 without retain_grad(): autograd does not
keep it, so None comes back."""

CHANGE = r'''
@@ -13,1 +13,0 @@ def intermediate_grad(w):
-    w2.retain_grad()
'''
