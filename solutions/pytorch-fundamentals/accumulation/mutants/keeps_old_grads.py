# misconception: keeps_old_grads
"""Forgets to clear the gradients already in .grad before accumulating: stale gradients
from earlier calls are added in."""

CHANGE = r'''
@@ -6,1 +6,0 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    model.zero_grad(set_to_none=True)
@@ -9,5 +8,2 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
+        (loss_fn(model(xb), yb) * (len(xb) / n)).backward()
'''
