# misconception: none
"""Misconception: each rank shuffles with its own seed (seed + rank), so
shards overlap and some examples are never seen in an epoch."""

CHANGE = r'''
@@ -8,2 +8,1 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
+    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed + rank)
@@ -11,1 +10,1 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    return [int(i) for i in sampler]
+    return list(sampler)
@@ -28,1 +28,3 @@ def epoch_orders(n, world_size, rank, epochs, seed):
     return orders
+
+
+from torch.utils.data import DistributedSampler
'''
