"""Misconception: calls model.train() first 'to be safe', so a model found in eval mode is evaluated
with BatchNorm's batch statistics (and dropout) and is left in train mode."""
# misconception: forces_train_mode

CHANGE = r'''
@@ -26,1 +27,1 @@ def epoch_loss(model, loader, loss_fn):
 def epoch_loss(model, loader, loss_fn):
+    model.train()
@@ -30,3 +31,2 @@ def epoch_loss(model, loader, loss_fn):
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
+            total += loss_fn(model(x), y).item() * len(x)
+            count += len(x)
'''
