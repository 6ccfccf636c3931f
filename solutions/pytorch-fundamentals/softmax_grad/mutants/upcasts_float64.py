# misconception: upcasts_to_float64
"""Upcasts to float64 for accuracy and forgets to cast back: float32 logits give a float64
gradient (the dtype must be kept)."""

CHANGE = r'''
@@ -6,6 +6,7 @@ def softmax_ce_grad(logits, target):
-    if logits.dim() == 1:
-        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
-    n = logits.shape[0]
-    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
-    grad[torch.arange(n), target] -= 1
-    return grad / n
+    z = logits.to(torch.float64)
+    p = torch.softmax(z, dim=-1)
+    if z.dim() == 1:
+        p[target] -= 1
+        return p
+    p[torch.arange(z.shape[0]), target] -= 1
+    return p / z.shape[0]
'''
