# misconception: divides_by_num_batches
"""Divides every micro-batch loss by the number of micro-batches: right only when all
micro-batches have the same size; wrong when the last one is shorter."""

CHANGE = r'''
@@ -6,8 +6,5 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    model.zero_grad(set_to_none=True)
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    model.zero_grad()
+    n_batches = math.ceil(len(X) / micro_batch_size)
+    for start in range(0, len(X), micro_batch_size):
+        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
+        (loss_fn(model(xb), yb) / n_batches).backward()
@@ -17,1 +15,3 @@ def unscaled_factor(n_examples, micro_batch_size):
     return n_examples / micro_batch_size
+
+
+import math
'''
