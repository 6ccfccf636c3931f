# misconception: inverse_ratio
"""Misconception: larger batches need a smaller learning rate."""

CHANGE = r'''
@@ -6,1 +6,1 @@ def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
-    return float(base_lr * per_rank_batch * world_size / base_batch)
+    return base_lr * base_batch / (per_rank_batch * world_size)
'''
