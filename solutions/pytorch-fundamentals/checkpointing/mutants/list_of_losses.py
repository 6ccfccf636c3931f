"""Misconception: collects the loss tensors in a list (graphs and all) and
averages at the end; memory grows with the number of batches."""
# misconception: keeps_graphs

CHANGE = r'''
@@ -27,7 +27,6 @@ def epoch_loss(model, loader, loss_fn):
-    total, count = 0.0, 0
-    with torch.no_grad():
-        for x, y in loader:
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
-    return total / count
+    losses, sizes = [], []
+    for x, y in loader:
+        losses.append(loss_fn(model(x), y))
+        sizes.append(len(x))
+    total = sum(l * n for l, n in zip(losses, sizes))
+    return float(total) / sum(sizes)
'''
