"""Misconception: divides each batch's summed loss by its own batch size, so a window's gradient is
the sum of its batch means instead of the mean over the window's samples."""
# misconception: divide_by_batch_size

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -21,1 +17,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        scaler.scale(loss).backward()          # backward outside autocast
+        scaler.scale(loss / y.shape[0]).backward()
@@ -30,1 +26,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-                        p.grad.div_(window_samples)
+                        pass
'''
