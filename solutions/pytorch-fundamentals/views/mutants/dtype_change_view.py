# misconception: dtype_change_view
"""Believes x.to(torch.float64) reinterprets the same memory (a view), as a cast in C might;
a new element type needs new bytes."""

CHANGE = r'''
@@ -26 +26 @@ def view_or_copy():
-        "to_float64": "copy",
+        "to_float64": "view",
'''
