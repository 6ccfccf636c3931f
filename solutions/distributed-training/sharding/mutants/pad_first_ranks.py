# misconception: pad_first_ranks
"""Misconception: the padding duplicates go to the first ranks."""

CHANGE = r'''
@@ -15,3 +15,3 @@ def padding_mask(n, world_size, rank):
-    per_rank = math.ceil(n / world_size)
-    # position j of rank r is position r + j * world_size of the padded permutation
-    return [rank + j * world_size >= n for j in range(per_rank)]
+    per = math.ceil(n / world_size)
+    pad = per * world_size - n
+    return [j == per - 1 and rank < pad for j in range(per)]
'''
