# misconception: contiguous_chunks
"""Misconception: each rank gets a contiguous block of the shuffled indices."""

CHANGE = r'''
@@ -8,4 +8,6 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    g = torch.Generator()
+    g.manual_seed(seed + epoch)
+    perm = torch.randperm(n, generator=g).tolist()
+    per = math.ceil(n / world_size)
+    padded = [perm[i % n] for i in range(per * world_size)]
+    return padded[rank * per:(rank + 1) * per]
'''
