# misconception: unweighted_loss
"""Misconception: the global loss is the average of the ranks' mean losses,
whatever the shard sizes."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -14,2 +13,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
@@ -17,3 +15,3 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
-    dist.all_reduce(total)
-    return total.item() / n_global.item()
+    mean = torch.tensor([loss.item()], dtype=torch.float64)
+    dist.all_reduce(mean)
+    return mean.item() / world_size
'''
