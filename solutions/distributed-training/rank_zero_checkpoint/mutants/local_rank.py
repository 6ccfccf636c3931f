# misconception: local_rank
"""Misconception: LOCAL_RANK 0 is rank zero; on a cluster every node has one."""

CHANGE = r'''
@@ -6,1 +6,1 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    if dist.get_rank() == 0:
+    if int(os.environ["LOCAL_RANK"]) == 0:
@@ -8,1 +8,1 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    dist.barrier()  # every rank waits until the file is complete
+    dist.barrier()
@@ -15,1 +16,3 @@ def resume(path, model, optimizer):
     return int(ckpt["epoch"])
+
+
+import os
'''
