# misconception: no_file
"""Misconception: rank 0 writes to a temporary name (path + ".tmp") to make the save atomic, and never renames
it to `path`: no file is at the path the caller gave."""

CHANGE = r'''
@@ -7,2 +7,3 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
-    dist.barrier()  # every rank waits until the file is complete
+        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)},
+                   str(path) + ".tmp")
+    dist.barrier()
'''
