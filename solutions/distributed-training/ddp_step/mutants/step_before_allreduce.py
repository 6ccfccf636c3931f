# misconception: step_before_allreduce
"""Misconception: the optimizer steps right after backward, and the gradients
are combined afterwards, too late to matter."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,3 +7,3 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
+    optimizer.zero_grad()
+    n = torch.tensor([float(len(x))], dtype=torch.float64)
+    dist.all_reduce(n)
@@ -12,1 +11,2 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    (loss * (len(x) / n_global.item())).backward()
+    (loss * len(x) / n.item()).backward()
+    optimizer.step()
@@ -14,3 +14,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
-    optimizer.step()
+        dist.all_reduce(p.grad)
@@ -19,1 +17,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    return total.item() / n_global.item()
+    return total.item() / n.item()
'''
