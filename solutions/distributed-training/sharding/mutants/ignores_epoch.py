# misconception: ignores_epoch
"""Misconception: the shuffle depends on the seed only, not on the epoch."""

CHANGE = r'''
@@ -8,4 +8,2 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
+    return list(sampler)
@@ -28,1 +27,3 @@ def epoch_orders(n, world_size, rank, epochs, seed):
     return orders
+
+
+from torch.utils.data import DistributedSampler
'''
