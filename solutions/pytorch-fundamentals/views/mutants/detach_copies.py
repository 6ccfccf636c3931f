# misconception: detach_copies
"""Believes detach() copies the data to cut it from the graph (it returns a new tensor over
the same memory)."""

CHANGE = r'''
@@ -23 +23 @@ def view_or_copy():
-        "detach": "view",
+        "detach": "copy",
'''
