"""Misconception: trainable_only defaults to False, so a plain count_parameters(model) counts frozen
parameters too."""
# misconception: default_counts_frozen

CHANGE = r'''
@@ -13,3 +13,1 @@ def count_parameters(model, trainable_only=True):
-def count_parameters(model, trainable_only=True):
-    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
-    # buffers are not parameters.
+def count_parameters(model, trainable_only=False):
'''
