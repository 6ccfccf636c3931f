# misconception: set_epoch_late
"""Misconception: set_epoch is called at the end of each epoch's loop, so
every epoch uses the previous epoch's order."""

CHANGE = r'''
@@ -25,1 +26,1 @@ def epoch_orders(n, world_size, rank, epochs, seed):
     for epoch in range(epochs):
+        orders.append([int(b[0]) for b in loader])
@@ -27,1 +28,0 @@ def epoch_orders(n, world_size, rank, epochs, seed):
-        orders.append([int(batch[0]) for batch in loader])
'''
