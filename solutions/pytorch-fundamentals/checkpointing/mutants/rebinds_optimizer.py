# misconception: optimizer_not_loaded
"""Misconception: load_checkpoint builds a new optimizer and loads the saved state into it; the name is rebound
inside the function only, so the caller's optimizer never gets the state (the file itself is complete)."""

CHANGE = r'''
@@ -17,1 +18,1 @@ def load_checkpoint(path, model, optimizer, scheduler):
     model.load_state_dict(ckpt["model"])
+    optimizer = type(optimizer)(model.parameters())  # a new object: the caller keeps the old one
@@ -21,2 +22,0 @@ def load_checkpoint(path, model, optimizer, scheduler):
-    if ckpt["cuda_rng"] and torch.cuda.is_available():
-        torch.cuda.set_rng_state_all(ckpt["cuda_rng"])
'''
