# misconception: pads_per_rank
"""Misconception: each rank takes every world_size-th index and pads its own shard to ceil(n / world_size) with
its own first indices (DistributedSampler pads the whole permutation once, so only the last ranks get padding)."""

CHANGE = r'''
@@ -8,4 +8,8 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    g = torch.Generator()
+    g.manual_seed(seed + epoch)
+    perm = torch.randperm(n, generator=g).tolist()
+    per = math.ceil(n / world_size)
+    mine = perm[rank::world_size]
+    if not mine:
+        return perm[:per]
+    return mine + (mine * per)[: per - len(mine)]
'''
