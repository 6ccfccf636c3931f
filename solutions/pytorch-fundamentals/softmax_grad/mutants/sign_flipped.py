# misconception: sign_flipped
"""Sign error: returns onehot - softmax (the gradient of the log-likelihood, not of the
loss)."""

CHANGE = r'''
@@ -6,6 +6,4 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    probs = torch.softmax(logits, dim=-1)
+    onehot = F.one_hot(target, logits.shape[-1]).to(logits.dtype)
+    n = logits.shape[0] if logits.dim() == 2 else 1
+    return (onehot - probs) / n
'''
