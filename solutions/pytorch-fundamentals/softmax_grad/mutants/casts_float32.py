# misconception: casts_to_float32
"""Casts to float32 (.float()) to be safe: float64 inputs come back as float32 and lose
precision."""

CHANGE = r'''
@@ -6,4 +6,6 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
+    z = logits.float()
+    if z.dim() == 1:
+        z = z.unsqueeze(0)
+        target = target.reshape(1)
+    n = z.shape[0]
+    grad = torch.softmax(z, dim=1)
@@ -11,1 +13,1 @@ def softmax_ce_grad(logits, target):
-    return grad / n
+    return (grad / n).reshape(logits.shape)
'''
