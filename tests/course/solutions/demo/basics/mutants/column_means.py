"""Averages the columns (dim=0) instead of the rows."""
# misconception: averages_columns

CHANGE = r'''
@@ -9,1 +9,1 @@ def row_means(x):
-    return x.mean(dim=1)
+    return x.mean(dim=0)
'''
