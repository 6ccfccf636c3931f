# misconception: every_rank_writes
"""Misconception: every rank holds the same model, so every rank may as well
write it."""

CHANGE = r'''
@@ -6,3 +6,2 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-    if dist.get_rank() == 0:
-        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
-    dist.barrier()  # every rank waits until the file is complete
+    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
+    dist.barrier()
'''
