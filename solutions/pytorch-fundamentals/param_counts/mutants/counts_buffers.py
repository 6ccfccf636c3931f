"""Misconception: buffers (BatchNorm running statistics, register_buffer tensors) are counted as
parameters: they are in the module's state, but nothing learns them."""
# misconception: counts_buffers

CHANGE = r'''
@@ -14,3 +14,2 @@ def count_parameters(model, trainable_only=True):
-    # model.parameters() yields each distinct Parameter once (tied weights dedupe);
-    # buffers are not parameters.
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    params = sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    return params + sum(b.numel() for b in model.buffers())
'''
