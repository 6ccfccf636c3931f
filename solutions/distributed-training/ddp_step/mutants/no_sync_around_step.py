# misconception: no_sync
"""Misconception: the whole step runs inside ddp_model.no_sync() (meant for the micro-batches of gradient
accumulation): the wrapper is called, yet its gradients are never all-reduced, so each rank steps on its own
shard."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,12 +7,14 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
-    loss = loss_fn(model(x), y)
-    (loss * (len(x) / n_global.item())).backward()
-    for p in model.parameters():
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
-    optimizer.step()
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
-    dist.all_reduce(total)
-    return total.item() / n_global.item()
+    ddp_model = DDP(model)
+    counts = torch.tensor([float(len(x))], dtype=torch.float64)
+    dist.all_reduce(counts)
+    optimizer.zero_grad()
+    with ddp_model.no_sync():
+        loss = loss_fn(ddp_model(x), y)
+        (loss * (world_size * len(x) / counts.item())).backward()
+        optimizer.step()
+    stats = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
+    dist.all_reduce(stats)
+    return stats.item() / counts.item()
+
+
+from torch.nn.parallel import DistributedDataParallel as DDP
'''
