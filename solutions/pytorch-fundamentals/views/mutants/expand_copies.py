# misconception: expand_copies
"""Believes expand materialises the repeated rows in new memory (it only sets a stride of 0)."""

CHANGE = r'''
@@ -14 +14 @@ def view_or_copy():
-        "expand": "view",
+        "expand": "copy",
'''
