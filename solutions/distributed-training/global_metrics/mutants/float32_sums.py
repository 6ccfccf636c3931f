# misconception: float32
"""Misconception: torch.tensor of Python floats is precise enough for sums
(it is float32 by default)."""

CHANGE = r'''
@@ -6,3 +6,3 @@ def global_mean(numerator, denominator):
-    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
-    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
-    return (totals[0] / totals[1]).item()
+    t = torch.tensor([numerator, denominator])
+    dist.all_reduce(t)
+    return (t[0] / t[1]).item()
'''
