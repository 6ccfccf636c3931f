"""Misconception: only counts parameters of leaf modules (those without children), missing
parameters registered directly on a container module (each distinct parameter is still counted once)."""
# misconception: misses_direct_params

CHANGE = r'''
@@ -14,3 +14,7 @@ def count_parameters(model, trainable_only=True):
-    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
-    # buffers are not parameters.
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    seen = {}
+    for m in model.modules():
+        if len(list(m.children())) == 0:
+            for p in m.parameters():
+                if p.requires_grad or not trainable_only:
+                    seen[id(p)] = p.numel()
+    return sum(seen.values())
'''
