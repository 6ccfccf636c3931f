"""Misconception: only steps when a full window of accum_steps batches is
complete, silently dropping the gradients of a short final window."""
# misconception: no_final_window

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -13,1 +9,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    n_batches = len(loader)
@@ -25,1 +20,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        if (i + 1) % accum_steps == 0 or i + 1 == n_batches:
+        if (i + 1) % accum_steps == 0:
'''
