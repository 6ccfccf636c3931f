# misconception: view_on_noncontiguous
"""Uses x.view(-1), which raises on a non-contiguous tensor such as x.T."""

CHANGE = r'''
@@ -31,1 +31,1 @@ def flatten_any(x):
-    return x.reshape(-1)
+    return x.view(-1)
'''
