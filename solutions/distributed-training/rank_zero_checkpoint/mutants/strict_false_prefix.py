# misconception: not_loaded
"""Misconception: keys saved with DDP's "module." prefix load fine with
strict=False (which silently loads nothing)."""

CHANGE = r'''
@@ -7,2 +7,3 @@ def save_on_rank_zero(path, model, optimizer, epoch):
-        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
-    dist.barrier()  # every rank waits until the file is complete
+        state = {f"module.{k}": v for k, v in model.state_dict().items()}
+        torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
+    dist.barrier()
@@ -12,3 +13,2 @@ def resume(path, model, optimizer):
-    ckpt = torch.load(path, map_location="cpu", weights_only=True)
-    model.load_state_dict(ckpt["model"])
-    optimizer.load_state_dict(ckpt["optimizer"])
+    ckpt = torch.load(path, weights_only=True)
+    model.load_state_dict(ckpt["model"], strict=False)
'''
