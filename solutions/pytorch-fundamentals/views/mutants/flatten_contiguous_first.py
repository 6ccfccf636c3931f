# misconception: contiguous_first
"""Calls .contiguous() before .view(-1): correct values but copies strided inputs whose
layout already allows a flat view."""

CHANGE = r'''
@@ -31,1 +31,1 @@ def flatten_any(x):
-    return x.reshape(-1)
+    return x.contiguous().view(-1)
'''
