# misconception: factor_type
"""Returns the number of micro-batches with integer division: the right number, but an int
where the contract asks for a Python float."""

CHANGE = r'''
@@ -17,1 +17,1 @@ def unscaled_factor(n_examples, micro_batch_size):
-    return n_examples / micro_batch_size
+    return n_examples // micro_batch_size
'''
