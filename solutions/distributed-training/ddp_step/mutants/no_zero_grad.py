# misconception: stale_grad
"""Misconception: gradients start at zero, so there is no need to clear
them; whatever an earlier step left in .grad is added to this step's."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,1 +7,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
@@ -14,2 +12,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
'''
