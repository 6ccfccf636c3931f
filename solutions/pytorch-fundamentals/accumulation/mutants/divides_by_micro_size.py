# misconception: divides_by_micro_batch_size
"""Scales every micro-batch's mean loss by 1 / micro_batch_size, confusing the size of a
micro-batch with its weight in the mean over the whole batch."""

CHANGE = r'''
@@ -7,7 +7,3 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    for start in range(0, len(X), micro_batch_size):
+        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
+        (loss_fn(model(xb), yb) / micro_batch_size).backward()
'''
