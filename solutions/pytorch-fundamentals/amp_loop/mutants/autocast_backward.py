"""Misconception: runs backward (and the optimizer logic) inside the autocast
region too; autocast should wrap the forward pass only."""
# misconception: autocast_backward

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -21,1 +17,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        scaler.scale(loss).backward()          # backward outside autocast
+            scaler.scale(loss).backward()      # backward inside autocast
'''
