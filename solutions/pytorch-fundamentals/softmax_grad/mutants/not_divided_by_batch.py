# misconception: not_averaged
"""Forgets that the mean reduction averages over the batch: the gradient is n times too
large (softmax - onehot, not divided by n)."""

CHANGE = r'''
@@ -5,1 +6,1 @@ def softmax_ce_grad(logits, target):
 def softmax_ce_grad(logits, target):
+    grad = torch.softmax(logits, dim=-1)
@@ -7,5 +8,4 @@ def softmax_ce_grad(logits, target):
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+        grad[target] -= 1
+    else:
+        grad[torch.arange(logits.shape[0]), target] -= 1
+    return grad
'''
