# misconception: modifies_input
"""Misconception: flatten with x.contiguous().resize_(n): for a contiguous x, contiguous() returns x itself, so
resize_ changes the caller's tensor (its shape and strides) in place."""

CHANGE = r'''
@@ -31,1 +31,1 @@ def flatten_any(x):
-    return x.reshape(-1)
+    return x.contiguous().resize_(x.numel())
'''
