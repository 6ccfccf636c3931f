# misconception: no_step
"""Misconception: combining the gradients is the whole step; the optimizer is
never asked to update the parameters."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -14,3 +13,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
-    optimizer.step()
+        dist.all_reduce(p.grad)
'''
