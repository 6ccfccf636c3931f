"""Misconception: averages the per-batch mean losses without weighting by
batch size, so a short last batch counts as much as a full one."""
# misconception: unweighted_batch_means

CHANGE = r'''
@@ -30,3 +30,2 @@ def epoch_loss(model, loader, loss_fn):
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
+            total += loss_fn(model(x), y).item()
+            count += 1
'''
