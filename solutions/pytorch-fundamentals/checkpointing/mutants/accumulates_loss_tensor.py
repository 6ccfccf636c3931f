"""Misconception: accumulates `total += loss * n` as a tensor with autograd on,
which keeps every batch's graph alive until the end of the epoch."""
# misconception: keeps_graphs

CHANGE = r'''
@@ -28,6 +28,5 @@ def epoch_loss(model, loader, loss_fn):
-    with torch.no_grad():
-        for x, y in loader:
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
-    return total / count
+    for x, y in loader:
+        n = len(x)
+        total = total + loss_fn(model(x), y) * n
+        count += n
+    return (total / count).item()
'''
