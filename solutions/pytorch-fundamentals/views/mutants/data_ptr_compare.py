# misconception: data_ptr
"""Compares the tensors' first-element addresses (data_ptr) instead of their storage: x and
x[1] start at different addresses but share storage."""

CHANGE = r'''
@@ -5,1 +5,1 @@ def shares_storage(a, b):
-    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
+    return a.data_ptr() == b.data_ptr()
'''
