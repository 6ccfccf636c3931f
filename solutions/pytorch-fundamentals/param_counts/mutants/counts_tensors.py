"""Misconception: counts parameter tensors (len(list(model.parameters()))) instead of the
scalars they hold (numel)."""
# misconception: counts_tensors

CHANGE = r'''
@@ -16,1 +16,1 @@ def count_parameters(model, trainable_only=True):
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    return len([p for p in model.parameters() if p.requires_grad or not trainable_only])
'''
