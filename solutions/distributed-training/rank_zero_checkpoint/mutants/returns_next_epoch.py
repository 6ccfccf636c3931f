# misconception: epoch_off_by_one
"""Misconception: resume returns the epoch to start from, one past the saved one."""

CHANGE = r'''
@@ -12,1 +12,1 @@ def resume(path, model, optimizer):
-    ckpt = torch.load(path, map_location="cpu", weights_only=True)
+    ckpt = torch.load(path, weights_only=True)
@@ -15,1 +15,1 @@ def resume(path, model, optimizer):
-    return int(ckpt["epoch"])
+    return int(ckpt["epoch"]) + 1
'''
