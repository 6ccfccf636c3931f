# misconception: pad_with_last
"""Misconception: the permutation is padded by repeating its last index."""

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
+    padded = perm + [perm[-1]] * (total - n)
+    return padded[rank:total:world_size]
'''
