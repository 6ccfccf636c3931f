# misconception: none
"""Misconception: only the writer needs to wait; the barrier inside `if rank
== 0` is a collective the other ranks never join, so rank 0 waits forever."""

CHANGE = r'''
@@ -8,1 +8,1 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    dist.barrier()  # every rank waits until the file is complete
+        dist.barrier()
'''
