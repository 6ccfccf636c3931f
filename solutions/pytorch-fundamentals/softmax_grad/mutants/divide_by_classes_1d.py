# misconception: divides_by_classes
"""Divides by logits.shape[0] whatever the shape: for unbatched (C,) logits that divides by
the number of classes C instead of 1."""

CHANGE = r'''
@@ -6,6 +6,3 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    probs = torch.softmax(logits, dim=-1)
+    onehot = F.one_hot(target, logits.shape[-1]).to(logits.dtype)
+    return (probs - onehot) / logits.shape[0]
'''
