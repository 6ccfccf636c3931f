"""Misconception: mlp_param_count builds the nn.Linear layers and counts their parameters instead
of using the formula (allocates memory for every weight)."""
# misconception: builds_layers

CHANGE = r'''
@@ -10,1 +10,1 @@ def mlp_param_count(sizes):
-    return sum(linear_param_count(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
+    return sum(p.numel() for a, b in zip(sizes[:-1], sizes[1:]) for p in nn.Linear(a, b).parameters())
'''
