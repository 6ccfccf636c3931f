# misconception: pad_every_rank
"""Misconception: when the split is uneven, every rank's last index is a
padding duplicate."""

CHANGE = r'''
@@ -15,3 +15,3 @@ def padding_mask(n, world_size, rank):
-    per_rank = math.ceil(n / world_size)
-    # position j of rank r is position r + j * world_size of the padded permutation
-    return [rank + j * world_size >= n for j in range(per_rank)]
+    per = math.ceil(n / world_size)
+    uneven = n % world_size != 0
+    return [uneven and j == per - 1 for j in range(per)]
'''
