"""Misconception: the formula is evaluated in NumPy int64 arithmetic, which silently wraps around
for widths whose product exceeds 2**63 - 1 (Python ints never overflow)."""
# misconception: int64_overflow

CHANGE = r'''
@@ -10,1 +10,2 @@ def mlp_param_count(sizes):
-    return sum(linear_param_count(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
+    w = np.array(sizes, dtype=np.int64)
+    return int((w[:-1] * w[1:] + w[1:]).sum())
@@ -29,1 +31,3 @@ def forward(self, x):
         return x
+
+
+import numpy as np
'''
