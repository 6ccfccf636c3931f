# misconception: drops_tail
"""Misconception: the tail that does not fill a round is dropped (drop_last=True's behaviour), not padded."""

CHANGE = r'''
@@ -8,4 +8,5 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    g = torch.Generator()
+    g.manual_seed(seed + epoch)
+    perm = torch.randperm(n, generator=g).tolist()
+    kept = perm[: (n // world_size) * world_size]
+    return kept[rank::world_size]
'''
