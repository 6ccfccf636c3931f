"""Misconception: returns the mean loss of the last batch only (the variable overwritten each batch),
not the mean per sample over the epoch."""
# misconception: last_batch_only

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -39,1 +35,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    return total_loss / total_samples
+    return loss.item() / y.shape[0]
'''
