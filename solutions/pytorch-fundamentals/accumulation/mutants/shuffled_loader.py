# misconception: shuffled
"""Misconception: the micro-batches come from DataLoader(TensorDataset(X, Y), batch_size=m, shuffle=True): every
example is used once, but not in order (the contract asks for X[0:m], X[m:2m], ... in order)."""

CHANGE = r'''
@@ -8,4 +8,1 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-    for start in range(0, n, micro_batch_size):
-        xb = X[start : start + micro_batch_size]
-        yb = Y[start : start + micro_batch_size]
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
+    for xb, yb in DataLoader(TensorDataset(X, Y), batch_size=micro_batch_size, shuffle=True):
@@ -17,1 +15,3 @@ def unscaled_factor(n_examples, micro_batch_size):
     return n_examples / micro_batch_size
+
+
+from torch.utils.data import DataLoader, TensorDataset
'''
