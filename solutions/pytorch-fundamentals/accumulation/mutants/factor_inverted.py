# misconception: factor_inverted
"""unscaled_factor returns the correction to apply (micro_batch_size / n_examples) instead
of how many times too large the gradient is."""

CHANGE = r'''
@@ -9,5 +9,2 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
+        (loss_fn(model(xb), yb) * (len(xb) / n)).backward()
@@ -17,1 +14,1 @@ def unscaled_factor(n_examples, micro_batch_size):
-    return n_examples / micro_batch_size
+    return micro_batch_size / n_examples
'''
