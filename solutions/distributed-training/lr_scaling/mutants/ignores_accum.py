# misconception: ignores_accum
"""Misconception: gradient accumulation does not change the effective batch."""

CHANGE = r'''
@@ -2,1 +2,1 @@ def effective_batch(per_rank_batch, world_size, accum_steps=1):
-    return int(per_rank_batch * world_size * accum_steps)
+    return per_rank_batch * world_size
'''
