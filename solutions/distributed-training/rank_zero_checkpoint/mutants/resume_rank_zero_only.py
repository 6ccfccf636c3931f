# misconception: ranks_differ
"""Misconception: only rank 0 needs to read the checkpoint, as only it wrote it."""

CHANGE = r'''
@@ -12,3 +12,4 @@ def resume(path, model, optimizer):
-    ckpt = torch.load(path, map_location="cpu", weights_only=True)
-    model.load_state_dict(ckpt["model"])
-    optimizer.load_state_dict(ckpt["optimizer"])
+    ckpt = torch.load(path, weights_only=True)
+    if dist.get_rank() == 0:
+        model.load_state_dict(ckpt["model"])
+        optimizer.load_state_dict(ckpt["optimizer"])
'''
