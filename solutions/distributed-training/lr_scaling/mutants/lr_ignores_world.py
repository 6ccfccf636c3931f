# misconception: ignores_world
"""Misconception: the rate scales with the per-rank batch only."""

CHANGE = r'''
@@ -6,1 +6,1 @@ def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
-    return float(base_lr * per_rank_batch * world_size / base_batch)
+    return base_lr * per_rank_batch / base_batch
'''
