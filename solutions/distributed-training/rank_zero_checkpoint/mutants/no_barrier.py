# misconception: no_barrier
"""Misconception: the other ranks have nothing to write, so they can return at once."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    dist.barrier()  # every rank waits until the file is complete
'''
