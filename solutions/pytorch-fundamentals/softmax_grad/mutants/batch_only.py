# misconception: unbatched_unsupported
"""Only handles the batched (n, C) form: for unbatched (C,) logits with a 0-d target it
treats the C logits as a batch of C examples."""

CHANGE = r'''
@@ -6,2 +6,0 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
@@ -9,1 +7,1 @@ def softmax_ce_grad(logits, target):
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
+    grad = torch.softmax(logits, dim=-1)
'''
