"""Misconception: the micro-batch losses are summed and backpropagated once at the end: the gradient is
right, but every micro-batch's graph stays alive until then, as the whole batch's would."""
# misconception: full_batch

CHANGE = r'''
@@ -6,8 +6,10 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
     model.zero_grad(set_to_none=True)
     n = len(X)
+    total = 0
     for start in range(0, n, micro_batch_size):
         xb = X[start : start + micro_batch_size]
         yb = Y[start : start + micro_batch_size]
         # The mean over all of X weights each micro-batch mean by its share of the examples.
         loss = loss_fn(model(xb), yb) * (len(xb) / n)
-        loss.backward()
+        total = total + loss
+    total.backward()
'''
