# misconception: full_batch
"""Computes the full-batch loss through type(model).forward(model, X), believing that a call
that bypasses model(...) (and anything wrapped around model.forward) is not a forward pass:
the whole batch still goes through the network at once."""

CHANGE = r'''
@@ -7,7 +7,1 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    n = len(X)
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+    loss_fn(type(model).forward(model, X), Y).backward()
'''
