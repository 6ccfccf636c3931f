"""Misconception: clips the gradients while they are still multiplied by the
loss scale (unscale_ only afterwards, inside scaler.step), so the clip
threshold is compared with scaled gradients."""
# misconception: clip_before_unscale

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -26,1 +22,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            scaler.unscale_(optimizer)         # true gradients, before clipping
'''
