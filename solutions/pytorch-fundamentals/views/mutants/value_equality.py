# misconception: value_equality
"""Treats equal values as shared memory: a clone has the same values but its own storage."""

CHANGE = r'''
@@ -5,1 +5,1 @@ def shares_storage(a, b):
-    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
+    return a.shape == b.shape and bool(torch.equal(a, b))
'''
