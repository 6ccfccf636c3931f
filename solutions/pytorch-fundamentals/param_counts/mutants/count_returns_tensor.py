"""Misconception: the count is accumulated in a tensor and returned as a 0-d tensor, not a Python int."""
# misconception: not_python_int

CHANGE = r'''
@@ -14,3 +14,2 @@ def count_parameters(model, trainable_only=True):
-    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
-    # buffers are not parameters.
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    sizes = [p.numel() for p in model.parameters() if p.requires_grad or not trainable_only]
+    return torch.tensor(sizes, dtype=torch.int64).sum()
'''
