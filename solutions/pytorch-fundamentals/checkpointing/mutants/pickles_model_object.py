"""Misconception: saves the model object itself (torch.save(model)) instead of
its state_dict; that needs weights_only=False to load, i.e. arbitrary
unpickling, and breaks with code changes."""
# misconception: pickles_objects

CHANGE = r'''
@@ -7,1 +7,1 @@ def save_checkpoint(path, model, optimizer, scheduler, epoch):
-        "model": model.state_dict(),
+        "model": model,
@@ -16,2 +16,2 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    ckpt = torch.load(path, weights_only=True)
-    model.load_state_dict(ckpt["model"])
+    ckpt = torch.load(path, weights_only=False)
+    model.load_state_dict(ckpt["model"].state_dict())
'''
