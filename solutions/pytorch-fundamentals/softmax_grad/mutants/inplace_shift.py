# misconception: modifies_input
"""Stabilises by subtracting the max in place (logits -= max, then exp_): the gradient is
right but the caller's logits are destroyed."""

CHANGE = r'''
@@ -5,1 +6,3 @@ def softmax_ce_grad(logits, target):
 def softmax_ce_grad(logits, target):
+    logits -= logits.max(dim=-1, keepdim=True).values
+    logits.exp_()
+    logits /= logits.sum(dim=-1, keepdim=True)
@@ -7,1 +10,2 @@ def softmax_ce_grad(logits, target):
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
+        logits[target] -= 1
+        return logits
@@ -9,3 +13,3 @@ def softmax_ce_grad(logits, target):
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    logits[torch.arange(n), target] -= 1
+    logits /= n
+    return logits
'''
