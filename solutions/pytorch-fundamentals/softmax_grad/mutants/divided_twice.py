# misconception: divided_twice
"""Averages twice: divides softmax - onehot by n, then takes the mean over the batch of the
already averaged rows again (dividing by n once more)."""

CHANGE = r'''
@@ -7,1 +7,1 @@ def softmax_ce_grad(logits, target):
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
+        return torch.softmax(logits, dim=0) - F.one_hot(target, logits.shape[0]).to(logits.dtype)
@@ -9,3 +9,2 @@ def softmax_ce_grad(logits, target):
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    per_example = (torch.softmax(logits, dim=1) - F.one_hot(target, logits.shape[1]).to(logits.dtype)) / n
+    return per_example / n
'''
