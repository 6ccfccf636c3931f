# misconception: memory_order
"""Flattens in memory order when it has to copy (sorting the dimensions by stride before
copying), which is the row-major order only for contiguous layouts: x.T comes out in x's
column-major order."""

CHANGE = r'''
@@ -31,1 +31,5 @@ def flatten_any(x):
-    return x.reshape(-1)
+    try:
+        return x.view(-1)
+    except RuntimeError:
+        order = sorted(range(x.dim()), key=lambda d: -x.stride(d))
+        return x.permute(order).contiguous().view(-1)
'''
