"""Misconception: bypasses the GradScaler (plain backward and optimizer.step),
so an overflowing step is applied and poisons the weights with inf/nan."""
# misconception: ignores_scaler

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -21,1 +17,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        scaler.scale(loss).backward()          # backward outside autocast
+        loss.backward()
@@ -26,1 +22,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            scaler.unscale_(optimizer)         # true gradients, before clipping
@@ -32,5 +27,2 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            scale_before = scaler.get_scale()
-            scaler.step(optimizer)             # skipped when inf/nan was found
-            scaler.update()                    # ...and then the scale shrinks
-            if scaler.get_scale() >= scale_before:
-                scheduler.step()
+            optimizer.step()
+            scheduler.step()
'''
