# misconception: types
"""Misconception: a batch size computed with / is fine as a float."""

CHANGE = r'''
@@ -2,1 +2,1 @@ def effective_batch(per_rank_batch, world_size, accum_steps=1):
-    return int(per_rank_batch * world_size * accum_steps)
+    return per_rank_batch * world_size * accum_steps / 1
'''
