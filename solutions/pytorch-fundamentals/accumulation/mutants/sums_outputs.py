# misconception: sums_outputs
"""Misconception: each micro-batch's loss is summed over examples and outputs (reduction="sum") and divided by
len(X): with several outputs per example the gradient is too large by the number of outputs (right only for
one output per example, as with cross-entropy)."""

CHANGE = r'''
@@ -11,2 +11,1 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
-        loss = loss_fn(model(xb), yb) * (len(xb) / n)
+        loss = loss_fn(model(xb), yb, reduction="sum") / n  # sums the outputs of each example too
'''
