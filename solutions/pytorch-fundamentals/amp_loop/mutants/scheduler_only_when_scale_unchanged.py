"""Misconception: the scheduler steps only when the scale is unchanged (get_scale() == before): right while
the scale never grows, but a scale that grew after a real step is taken for a skipped one."""
# misconception: none

CHANGE = r'''
@@ -34,1 +34,1 @@ def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
-            if scaler.get_scale() >= scale_before:
+            if scaler.get_scale() == scale_before:
'''
