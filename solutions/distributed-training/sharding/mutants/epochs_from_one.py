# misconception: epochs_from_one
"""Misconception: epochs are counted from 1 when calling set_epoch."""

CHANGE = r'''
@@ -25,1 +25,1 @@ def epoch_orders(n, world_size, rank, epochs, seed):
-    for epoch in range(epochs):
+    for epoch in range(1, epochs + 1):
@@ -27,1 +27,1 @@ def epoch_orders(n, world_size, rank, epochs, seed):
-        orders.append([int(batch[0]) for batch in loader])
+        orders.append([int(b[0]) for b in loader])
'''
