# misconception: one_hot_num_classes
"""Builds the one-hot target with F.one_hot(target) without num_classes: it has only
max(target) + 1 columns, so it no longer lines up with the C logits when the batch's targets
never reach the last class."""

CHANGE = r'''
@@ -6,6 +6,4 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    probs = torch.softmax(logits, dim=-1)
+    onehot = F.one_hot(target).to(logits.dtype)
+    n = logits.shape[0] if logits.dim() == 2 else 1
+    return (probs - onehot) / n
'''
