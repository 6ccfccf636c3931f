# misconception: loss_type
"""Misconception: returning the loss tensor is as good as returning a number."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -14,2 +13,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
@@ -19,1 +17,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    return total.item() / n_global.item()
+    return total[0] / n_global[0]
'''
