# misconception: unscaled
"""Backpropagates each micro-batch mean loss unscaled: the accumulated gradient is (number
of micro-batches) times too large."""

CHANGE = r'''
@@ -6,8 +6,4 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    model.zero_grad(set_to_none=True)
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    model.zero_grad()
+    for start in range(0, len(X), micro_batch_size):
+        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
+        loss_fn(model(xb), yb).backward()
'''
