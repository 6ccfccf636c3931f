# misconception: mask_length
"""Misconception: padding_mask gives one flag per real index of the rank (range(rank, n, world_size)), forgetting
the padded positions: the mask is shorter than the shard on the ranks that get padding."""

CHANGE = r'''
@@ -15,3 +15,1 @@ def padding_mask(n, world_size, rank):
-    per_rank = math.ceil(n / world_size)
-    # position j of rank r is position r + j * world_size of the padded permutation
-    return [rank + j * world_size >= n for j in range(per_rank)]
+    return [False for _ in range(rank, n, world_size)]
'''
