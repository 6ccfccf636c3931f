# misconception: no_reduce
"""Misconception: each rank's own mean is already the metric."""

CHANGE = r'''
@@ -6,3 +6,1 @@ def global_mean(numerator, denominator):
-    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
-    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
-    return (totals[0] / totals[1]).item()
+    return numerator / denominator
'''
