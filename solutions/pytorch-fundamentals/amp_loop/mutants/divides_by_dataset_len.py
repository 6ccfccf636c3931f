# misconception: divides_by_dataset_len
"""Misconception: the mean loss per sample divides by len(loader.dataset), which is the number of samples seen
only when the loader visits every sample once (not with drop_last or a sampler)."""

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -39,1 +35,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    return total_loss / total_samples
+    return total_loss / len(loader.dataset)
'''
