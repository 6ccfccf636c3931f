# misconception: no_optimizer_state
"""Misconception: the weights are the whole state of training."""

CHANGE = r'''
@@ -7,2 +7,2 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
-    dist.barrier()  # every rank waits until the file is complete
+        torch.save({"model": model.state_dict(), "epoch": int(epoch)}, path)
+    dist.barrier()
@@ -12,1 +12,1 @@ def resume(path, model, optimizer):
-    ckpt = torch.load(path, map_location="cpu", weights_only=True)
+    ckpt = torch.load(path, weights_only=True)
@@ -14,1 +14,0 @@ def resume(path, model, optimizer):
-    optimizer.load_state_dict(ckpt["optimizer"])
'''
