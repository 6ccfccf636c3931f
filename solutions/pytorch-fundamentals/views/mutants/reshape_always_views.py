# misconception: reshape_always_views
"""Believes reshape always returns a view (like view does when it can), so x.T.reshape(-1)
would share x's storage."""

CHANGE = r'''
@@ -20 +20 @@ def view_or_copy():
-        "reshape_transposed": "copy",
+        "reshape_transposed": "view",
'''
