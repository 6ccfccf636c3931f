# misconception: reduce_not_allreduce
"""Misconception: dist.reduce gives every rank the sum (it gives it to dst only)."""

CHANGE = r'''
@@ -6,3 +6,3 @@ def global_mean(numerator, denominator):
-    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
-    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
-    return (totals[0] / totals[1]).item()
+    t = torch.tensor([numerator, denominator], dtype=torch.float64)
+    dist.reduce(t, dst=0)
+    return (t[0] / t[1]).item()
'''
