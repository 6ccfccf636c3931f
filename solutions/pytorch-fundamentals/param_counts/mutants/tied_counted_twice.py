"""Misconception: sums every module's own parameters, so a parameter shared by two modules (tied
weights) is counted twice."""
# misconception: tied_twice

CHANGE = r'''
@@ -16,1 +16,6 @@ def count_parameters(model, trainable_only=True):
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    total = 0
+    for _, module in model.named_modules():
+        for p in module.parameters(recurse=False):
+            if p.requires_grad or not trainable_only:
+                total += p.numel()
+    return total
'''
