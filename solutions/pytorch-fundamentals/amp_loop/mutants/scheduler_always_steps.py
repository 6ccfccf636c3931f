"""Misconception: steps the scheduler after every optimizer step, even when
the scaler skipped the update because of inf/nan gradients."""
# misconception: scheduler_steps_on_skip

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -32,1 +28,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            scale_before = scaler.get_scale()
@@ -35,2 +30,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            if scaler.get_scale() >= scale_before:
-                scheduler.step()
+            scheduler.step()
'''
