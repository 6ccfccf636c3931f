# misconception: overlap
"""Decides sharing by whether the memory ranges the two tensors touch overlap: x[0] and
x[1] do not overlap but live in the same storage."""

CHANGE = r'''
@@ -5,1 +5,8 @@ def shares_storage(a, b):
-    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
+    def span(t):
+        lo = t.data_ptr()
+        last = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True))
+        hi = lo + (last + 1) * t.element_size()
+        return lo, hi
+
+    (a0, a1), (b0, b1) = span(a), span(b)
+    return a0 < b1 and b0 < a1
'''
