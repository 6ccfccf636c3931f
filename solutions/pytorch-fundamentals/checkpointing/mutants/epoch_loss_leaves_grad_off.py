"""Misconception: epoch_loss turns gradient recording off with torch.set_grad_enabled(False) as a
statement, and never back on: every later training step of the caller records no graph."""
# misconception: none

CHANGE = r'''
@@ -28,5 +28,5 @@ def epoch_loss(model, loader, loss_fn):
-    with torch.no_grad():
-        for x, y in loader:
-            n = len(x)
-            total += loss_fn(model(x), y).item() * n
-            count += n
+    torch.set_grad_enabled(False)
+    for x, y in loader:
+        n = len(x)
+        total += loss_fn(model(x), y).item() * n
+        count += n
'''
