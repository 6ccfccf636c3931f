"""Misconception: adds up the per-batch mean losses and forgets to divide at all."""
# misconception: sum_of_batch_means

CHANGE = r'''
@@ -27,1 +27,1 @@ def epoch_loss(model, loader, loss_fn):
-    total, count = 0.0, 0
+    total = 0.0
@@ -30,4 +30,2 @@ def epoch_loss(model, loader, loss_fn):
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
-    return total / count
+            total += loss_fn(model(x), y).item()
+    return total
'''
