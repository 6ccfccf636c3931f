# misconception: no_autocast
"""Misconception: the forward runs in full precision: no torch.autocast at all (the scaler alone is not
mixed precision)."""

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -18,3 +14,2 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-        with torch.autocast(device.type, dtype=amp_dtype):
-            logits = model(x)
-            loss = loss_fn(logits, y)          # a sum over the batch
+        logits = model(x)
+        loss = loss_fn(logits, y)              # a sum over the batch, in full precision
'''
