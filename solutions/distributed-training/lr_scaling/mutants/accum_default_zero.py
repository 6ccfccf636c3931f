# misconception: none
"""Misconception: accum_steps is always given, so it needs no default."""

CHANGE = r'''
@@ -1,2 +1,2 @@ def effective_batch(per_rank_batch, world_size, accum_steps=1):
-def effective_batch(per_rank_batch, world_size, accum_steps=1):
-    return int(per_rank_batch * world_size * accum_steps)
+def effective_batch(per_rank_batch, world_size, accum_steps):
+    return per_rank_batch * world_size * accum_steps
'''
