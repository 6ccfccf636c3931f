# misconception: types
"""Misconception: an integral learning rate can be returned as an int."""

CHANGE = r'''
@@ -6,1 +6,2 @@ def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
-    return float(base_lr * per_rank_batch * world_size / base_batch)
+    value = base_lr * per_rank_batch * world_size / base_batch
+    return int(value) if value == int(value) else value
'''
