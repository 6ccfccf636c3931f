"""Misconception: divides the accumulated (summed) loss by accum_steps, as if
each batch contributed a batch-mean loss, instead of by the number of samples
in the window."""
# misconception: divide_by_accum

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -30,1 +26,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-                        p.grad.div_(window_samples)
+                        p.grad.div_(accum_steps)
'''
