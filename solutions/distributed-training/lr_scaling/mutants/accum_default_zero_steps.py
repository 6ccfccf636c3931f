# misconception: accum_default
"""Misconception: accum_steps defaults to 0 ("no accumulation"), so the default effective batch is 0."""

CHANGE = r'''
@@ -1,1 +1,1 @@ def effective_batch(per_rank_batch, world_size, accum_steps=1):
-def effective_batch(per_rank_batch, world_size, accum_steps=1):
+def effective_batch(per_rank_batch, world_size, accum_steps=0):
'''
