"""Misconception: returns the summed loss of the whole epoch, never divided by the number of samples."""
# misconception: loss_not_divided

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -39,1 +35,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    return total_loss / total_samples
+    return total_loss
'''
