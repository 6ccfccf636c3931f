# misconception: inverted_flag
"""Misconception: the requires_grad test is inverted: trainable_only=True counts the frozen parameters (and
trainable_only=False only the trainable ones)."""

CHANGE = r'''
@@ -14,3 +14,1 @@ def count_parameters(model, trainable_only=True):
-    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
-    # buffers are not parameters.
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    return sum(p.numel() for p in model.parameters() if p.requires_grad != trainable_only)
'''
