# misconception: no_sync
"""Misconception: the model is wrapped in DistributedDataParallel, but the
forward pass calls ddp_model.module, so DDP's gradient hooks never run and
each rank steps on its own shard's gradient."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,8 +7,6 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
-    loss = loss_fn(model(x), y)
-    (loss * (len(x) / n_global.item())).backward()
-    for p in model.parameters():
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+    ddp_model = DDP(model)
+    counts = torch.tensor([float(len(x))], dtype=torch.float64)
+    dist.all_reduce(counts)
+    optimizer.zero_grad()
+    loss = loss_fn(ddp_model.module(x), y)
+    (loss * (world_size * len(x) / counts.item())).backward()
@@ -17,3 +14,6 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
-    dist.all_reduce(total)
-    return total.item() / n_global.item()
+    stats = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
+    dist.all_reduce(stats)
+    return stats.item() / counts.item()
+
+
+from torch.nn.parallel import DistributedDataParallel as DDP
'''
