# misconception: grad_cleared
"""Misconception: the gradients are cleared after the step (optimizer.zero_grad at the end), so .grad no longer
holds the combined gradient the contract asks to leave there."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -16,1 +16,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
     optimizer.step()
+    optimizer.zero_grad(set_to_none=True)
'''
