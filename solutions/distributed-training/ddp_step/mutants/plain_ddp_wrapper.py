# misconception: unweighted_mean
"""Misconception: wrapping the model in DistributedDataParallel is enough;
but DDP divides the summed gradients by the world size, which is the global
mean only when every shard has the same size."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,8 +7,4 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
-    loss = loss_fn(model(x), y)
-    (loss * (len(x) / n_global.item())).backward()
-    for p in model.parameters():
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+    ddp = DDP(model)
+    optimizer.zero_grad()
+    loss = loss_fn(ddp(x), y)
+    loss.backward()
@@ -17,1 +12,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
+    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
@@ -19,1 +14,4 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    return total.item() / n_global.item()
+    return (total[0] / total[1]).item()
+
+
+from torch.nn.parallel import DistributedDataParallel as DDP
'''
