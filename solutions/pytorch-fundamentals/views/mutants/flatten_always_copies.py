# misconception: flatten_copies
"""Clones to be safe: flatten_any never returns a view, even of a contiguous tensor."""

CHANGE = r'''
@@ -31,1 +31,1 @@ def flatten_any(x):
-    return x.reshape(-1)
+    return x.flatten().clone()
'''
