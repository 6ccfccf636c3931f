# misconception: epoch_type
"""Misconception: the epoch can be returned as stored, a tensor."""

CHANGE = r'''
@@ -7,2 +7,3 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
-    dist.barrier()  # every rank waits until the file is complete
+        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": torch.tensor(epoch)},
+                   path)
+    dist.barrier()
@@ -12,1 +13,1 @@ def resume(path, model, optimizer):
-    ckpt = torch.load(path, map_location="cpu", weights_only=True)
+    ckpt = torch.load(path, weights_only=True)
@@ -15,1 +16,1 @@ def resume(path, model, optimizer):
-    return int(ckpt["epoch"])
+    return ckpt["epoch"]
'''
