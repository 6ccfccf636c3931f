"""Misconception: hard-codes float16 for autocast instead of using the amp_dtype argument."""
# misconception: autocast_dtype

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -18,1 +14,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        with torch.autocast(device.type, dtype=amp_dtype):
+        with torch.autocast(device.type, dtype=torch.float16):
'''
