"""Misconception: mlp_param_count adds a bias for every width in sizes, the input layer included."""
# misconception: mlp_bias_every_width

CHANGE = r'''
@@ -10,1 +10,1 @@ def mlp_param_count(sizes):
-    return sum(linear_param_count(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
+    return sum(a * b for a, b in zip(sizes[:-1], sizes[1:])) + sum(sizes)
'''
