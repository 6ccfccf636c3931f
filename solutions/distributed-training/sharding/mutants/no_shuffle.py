# misconception: no_shuffle
"""Misconception: DistributedSampler only splits the data; it does not shuffle."""

CHANGE = r'''
@@ -8,4 +8,2 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    total = math.ceil(n / world_size) * world_size
+    return [i % n for i in range(total)][rank:total:world_size]
'''
