# misconception: unweighted_mean
"""Misconception: the gradients are averaged over ranks (divided by the world
size), as if every shard had the same size."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,3 +7,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
+    optimizer.zero_grad()
@@ -12,1 +9,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    (loss * (len(x) / n_global.item())).backward()
+    loss.backward()
@@ -14,2 +11,2 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
+        p.grad /= world_size
@@ -17,1 +14,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
+    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
@@ -19,1 +16,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    return total.item() / n_global.item()
+    return (total[0] / total[1]).item()
'''
