# misconception: no_padding, mask_length
"""Misconception: the indices are dealt out with no padding, so ranks may get
different numbers of examples."""

CHANGE = r'''
@@ -8,4 +8,3 @@ def shard_indices(n, world_size, rank, epoch, seed):
-    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
-                                 drop_last=False)
-    sampler.set_epoch(epoch)
-    return [int(i) for i in sampler]
+    g = torch.Generator()
+    g.manual_seed(seed + epoch)
+    return torch.randperm(n, generator=g).tolist()[rank::world_size]
'''
