# misconception: ignores_world
"""Misconception: the batch size of a step is the per-rank batch."""

CHANGE = r'''
@@ -2,1 +2,1 @@ def effective_batch(per_rank_batch, world_size, accum_steps=1):
-    return int(per_rank_batch * world_size * accum_steps)
+    return per_rank_batch * accum_steps
'''
