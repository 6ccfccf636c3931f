# misconception: full_batch
"""Ignores micro_batch_size and runs the whole batch through the model at once (the
gradient is right but the memory saving is gone)."""

CHANGE = r'''
@@ -6,8 +6,2 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    model.zero_grad(set_to_none=True)
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    model.zero_grad()
+    loss_fn(model(X), Y).backward()
'''
