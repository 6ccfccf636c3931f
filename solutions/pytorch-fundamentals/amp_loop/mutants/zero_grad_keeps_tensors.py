"""Misconception: zeroes the gradients in place (set_to_none=False), keeping
zero-filled .grad tensors around instead of releasing them."""
# misconception: zero_grad_not_none

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -37,1 +33,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            optimizer.zero_grad(set_to_none=True)
+            optimizer.zero_grad(set_to_none=False)
'''
