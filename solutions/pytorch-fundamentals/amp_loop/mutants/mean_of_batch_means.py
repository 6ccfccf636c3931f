"""Misconception: returns the mean of the per-batch mean losses, which weighs
the short final batch like a full one, instead of the mean per sample."""
# misconception: mean_of_batch_means

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -22,1 +18,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        total_loss += loss.item()
+        total_loss += loss.item() / y.shape[0]
@@ -39,1 +35,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    return total_loss / total_samples
+    return total_loss / n_batches
'''
