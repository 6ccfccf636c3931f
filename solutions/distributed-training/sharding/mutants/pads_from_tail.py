# misconception: pads_from_tail
"""Misconception: the permutation is padded with its last indices (DistributedSampler repeats its first ones)."""

CHANGE = r'''
@@ -8,4 +8,6 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    g = torch.Generator()
+    g.manual_seed(seed + epoch)
+    perm = torch.randperm(n, generator=g).tolist()
+    total = math.ceil(n / world_size) * world_size
+    padded = perm + ((perm * total)[-(total - n):] if total > n else [])
+    return padded[rank:total:world_size]
'''
