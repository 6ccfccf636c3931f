"""Misconception: clips each gradient entry to [-max_grad_norm, max_grad_norm]
(clip_grad_value_) instead of rescaling the total norm of all gradients (clip_grad_norm_)."""
# misconception: clip_by_value

CHANGE = r'''
@@ -7,4 +7,0 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-    """One epoch of mixed-precision training with gradient accumulation.
-
-    Returns the mean loss per sample over the epoch as a Python float.
-    """
@@ -31,1 +27,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
+            torch.nn.utils.clip_grad_value_(model.parameters(), max_grad_norm)
'''
