# misconception: no_barrier
"""Misconception: a barrier anywhere synchronises the ranks; here it is before
the save, so the others still return while rank 0 writes."""

CHANGE = r'''
@@ -5,1 +6,1 @@ def save_on_rank_zero(path, model, optimizer, epoch):
 def save_on_rank_zero(path, model, optimizer, epoch):
+    dist.barrier()
@@ -8,1 +9,0 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    dist.barrier()  # every rank waits until the file is complete
'''
