"""Misconception: zeroes the gradients before every batch, so only the last batch of each window
contributes to the step (accumulation is lost)."""
# misconception: zero_inside_window

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -17,1 +14,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
         x, y = x.to(device), y.to(device)
+        optimizer.zero_grad(set_to_none=True)
'''
