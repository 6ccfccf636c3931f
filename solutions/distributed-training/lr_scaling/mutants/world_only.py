# misconception: none
"""Misconception: the rate is multiplied by the number of ranks, whatever the batches."""

CHANGE = r'''
@@ -6,1 +6,1 @@ def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
-    return float(base_lr * per_rank_batch * world_size / base_batch)
+    return float(base_lr * world_size)
'''
