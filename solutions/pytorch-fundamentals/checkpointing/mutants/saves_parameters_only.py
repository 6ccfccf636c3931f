"""Misconception: the checkpoint holds dict(model.named_parameters()) rather than model.state_dict(), so
a model with buffers (BatchNorm's running statistics) resumes with fresh buffers."""
# misconception: none

CHANGE = r'''
@@ -7,1 +7,1 @@ def save_checkpoint(path, model, optimizer, scheduler, epoch):
-        "model": model.state_dict(),
+        "model": {k: v.detach() for k, v in model.named_parameters()},
@@ -17,1 +17,1 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    model.load_state_dict(ckpt["model"])
+    model.load_state_dict(ckpt["model"], strict=False)
'''
