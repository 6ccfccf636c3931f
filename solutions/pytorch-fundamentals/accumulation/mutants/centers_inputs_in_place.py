# misconception: modifies_input
"""Misconception: the inputs are centred in place (X -= X.mean(0)) before accumulating: the caller's X changes
(and the gradients with it)."""

CHANGE = r'''
@@ -6,1 +7,1 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
     model.zero_grad(set_to_none=True)
+    X -= X.mean(dim=0)
@@ -11,1 +12,0 @@ def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
-        # The mean over all of X weights each micro-batch mean by its share of the examples.
'''
