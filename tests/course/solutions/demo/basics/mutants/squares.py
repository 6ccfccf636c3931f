"""Squares the values instead of doubling them."""
# misconception: squares

CHANGE = r'''
@@ -5,1 +5,1 @@ def double(x):
-    return x * 2
+    return x * x
'''
