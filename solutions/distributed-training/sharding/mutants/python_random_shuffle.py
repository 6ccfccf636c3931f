# misconception: python_shuffle
"""Misconception: the shuffle uses Python's random module seeded with seed + epoch (DistributedSampler uses a
torch.Generator and torch.randperm)."""

CHANGE = r'''
@@ -8,4 +8,5 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    idx = list(range(n))
+    random.Random(seed + epoch).shuffle(idx)
+    total = math.ceil(n / world_size) * world_size
+    padded = idx + (idx * math.ceil((total - n) / n))[: total - n] if total > n else idx
+    return padded[rank:total:world_size]
@@ -28,1 +30,3 @@ def epoch_orders(n, world_size, rank, epochs, seed):
     return orders
+
+
+import random
'''
