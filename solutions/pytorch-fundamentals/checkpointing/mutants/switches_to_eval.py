"""Misconception: evaluation code calls model.eval() and leaves the model there, so a model found in
train mode is evaluated in eval mode (BatchNorm's running statistics, no dropout) and stays in eval
mode for the training that follows."""
# misconception: switches_to_eval

CHANGE = r'''
@@ -26,1 +27,1 @@ def epoch_loss(model, loader, loss_fn):
 def epoch_loss(model, loader, loss_fn):
+    model.eval()
@@ -30,3 +31,2 @@ def epoch_loss(model, loader, loss_fn):
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
+            total += loss_fn(model(x), y).item() * len(x)
+            count += len(x)
'''
