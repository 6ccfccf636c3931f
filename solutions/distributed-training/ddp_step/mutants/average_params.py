# misconception: average_params, no_sync
"""Misconception: each rank steps on its own gradient and the parameters are
averaged afterwards, which looks equivalent but weighs every rank equally."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
@@ -8,3 +7,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    optimizer.zero_grad(set_to_none=True)
-    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
-    dist.all_reduce(n_global)
+    optimizer.zero_grad()
@@ -12,4 +9,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    (loss * (len(x) / n_global.item())).backward()
-    for p in model.parameters():
-        if p.grad is not None:
-            dist.all_reduce(p.grad)
+    loss.backward()
@@ -17,1 +11,5 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
+    with torch.no_grad():
+        for p in model.parameters():
+            dist.all_reduce(p)
+            p /= world_size
+    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
@@ -19,1 +17,1 @@ def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
-    return total.item() / n_global.item()
+    return (total[0] / total[1]).item()
'''
