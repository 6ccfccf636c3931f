"""Misconception: mlp_param_count counts the weight matrices only and forgets the biases."""
# misconception: mlp_no_biases

CHANGE = r'''
@@ -10,1 +10,1 @@ def mlp_param_count(sizes):
-    return sum(linear_param_count(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
+    return sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
'''
