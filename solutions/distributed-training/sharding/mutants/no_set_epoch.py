# misconception: no_set_epoch
"""Misconception: the sampler reshuffles by itself every epoch; set_epoch is
never called."""

CHANGE = r'''
@@ -24,5 +24,1 @@ def epoch_orders(n, world_size, rank, epochs, seed):
-    orders = []
-    for epoch in range(epochs):
-        sampler.set_epoch(epoch)
-        orders.append([int(batch[0]) for batch in loader])
-    return orders
+    return [[int(b[0]) for b in loader] for _ in range(epochs)]
'''
