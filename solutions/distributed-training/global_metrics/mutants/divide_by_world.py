# misconception: divide_by_world
"""Misconception: after summing the numerators, divide by the number of ranks."""

CHANGE = r'''
@@ -6,3 +6,3 @@ def global_mean(numerator, denominator):
-    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
-    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
-    return (totals[0] / totals[1]).item()
+    t = torch.tensor([numerator], dtype=torch.float64)
+    dist.all_reduce(t)
+    return t.item() / dist.get_world_size()
'''
