# misconception: drops_last
"""Loops over len(X) // micro_batch_size full micro-batches only, silently dropping the
short last one (and its examples)."""

CHANGE = r'''
@@ -6,8 +6,7 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    model.zero_grad(set_to_none=True)
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    model.zero_grad()
+    k = len(X) // micro_batch_size
+    used = k * micro_batch_size
+    for i in range(k):
+        xb = X[i * micro_batch_size : (i + 1) * micro_batch_size]
+        yb = Y[i * micro_batch_size : (i + 1) * micro_batch_size]
+        (loss_fn(model(xb), yb) * (len(xb) / used)).backward()
'''
