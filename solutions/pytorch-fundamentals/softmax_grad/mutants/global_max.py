# misconception: global_max
"""Stabilises softmax by subtracting the largest logit of the whole batch instead of each row's
own maximum: a row whose logits all lie far below the batch's maximum underflows to 0/0."""

CHANGE = r'''
@@ -6,6 +6,5 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    z = logits.reshape(-1, logits.shape[-1])
+    e = torch.exp(z - z.max())
+    p = e / e.sum(dim=1, keepdim=True)
+    p[torch.arange(z.shape[0]), target.reshape(-1)] -= 1
+    return (p / z.shape[0]).reshape(logits.shape)
'''
