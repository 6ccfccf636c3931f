# misconception: destroys_group
"""Misconception: a function that used the process group should clean it up
with destroy_process_group; the group belongs to the caller."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -14,2 +13,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+        dist.all_reduce(p.grad)
@@ -18,1 +17,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
     dist.all_reduce(total)
+    dist.destroy_process_group()
'''
