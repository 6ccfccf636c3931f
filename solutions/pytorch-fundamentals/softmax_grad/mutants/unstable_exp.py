# misconception: unstable_exp
"""Unstable softmax: exp(logits) / sum exp(logits) without subtracting the max overflows to
inf (then nan) for logits around +1e4."""

CHANGE = r'''
@@ -9,1 +9,2 @@ def softmax_ce_grad(logits, target):
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
+    e = torch.exp(logits)
+    grad = e / e.sum(dim=1, keepdim=True)
'''
