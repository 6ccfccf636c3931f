# misconception: divides_by_dataset_len
"""Misconception: epoch_loss divides the summed loss by len(loader.dataset), the number of samples seen only when
the loader visits every sample of its dataset once."""

CHANGE = r'''
@@ -27,1 +27,1 @@ def epoch_loss(model, loader, loss_fn):
-    total, count = 0.0, 0
+    total = 0.0
@@ -30,4 +30,2 @@ def epoch_loss(model, loader, loss_fn):
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
-    return total / count
+            total += loss_fn(model(x), y).item() * len(x)
+    return total / len(loader.dataset)
'''
