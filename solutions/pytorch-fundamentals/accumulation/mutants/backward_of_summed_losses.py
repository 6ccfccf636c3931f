"""Misconception: the micro-batch losses are summed and backpropagated once at the end: the gradient is
right, but every micro-batch's graph stays alive until then, as the whole batch's would."""
# misconception: full_batch

CHANGE = r'''
@@ -7,1 +8,1 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
     n = len(X)
+    total = 0
@@ -13,1 +14,2 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-        loss.backward()
+        total = total + loss
+    total.backward()
'''
