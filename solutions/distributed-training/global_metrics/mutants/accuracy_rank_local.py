# misconception: no_reduce
"""Misconception: each rank returns the accuracy of its own valid examples (nothing is combined across ranks)."""

CHANGE = r'''
@@ -13,3 +13,1 @@ def global_accuracy(logits, target, valid):
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    return (correct.double() / valid.sum().clamp(min=1)).item()
'''
