# misconception: sqrt_rule
"""Misconception: the learning rate scales with the square root of the batch ratio."""

CHANGE = r'''
@@ -6,1 +6,4 @@ def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
-    return float(base_lr * per_rank_batch * world_size / base_batch)
+    return base_lr * math.sqrt(per_rank_batch * world_size / base_batch)
+
+
+import math
'''
