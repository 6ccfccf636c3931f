"""Misconception: steps the scheduler after every batch instead of once per optimizer step."""
# misconception: scheduler_per_batch

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -22,1 +19,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
         total_loss += loss.item()
+        scheduler.step()
@@ -32,1 +29,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            scale_before = scaler.get_scale()
@@ -35,2 +31,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            if scaler.get_scale() >= scale_before:
-                scheduler.step()
'''
