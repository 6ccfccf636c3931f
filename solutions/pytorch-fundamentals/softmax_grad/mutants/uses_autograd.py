# misconception: uses_autograd
"""Calls autograd on the inputs instead of deriving the gradient: fails when gradient
recording is off (torch.no_grad) as the contract requires."""

CHANGE = r'''
@@ -6,6 +6,4 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    z = logits.detach().requires_grad_(True)
+    loss = F.cross_entropy(z, target)
+    (g,) = torch.autograd.grad(loss, z)
+    return g
'''
