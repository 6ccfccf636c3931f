# misconception: local_loss
"""Misconception: the step is right, but each rank returns the loss of its
own shard instead of the global mean loss."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -14,2 +13,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
@@ -17,3 +15,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
-    dist.all_reduce(total)
-    return total.item() / n_global.item()
+    return loss.item()
'''
