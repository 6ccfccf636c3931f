"""Misconception: trainable_only is ignored, frozen parameters (requires_grad=False) are counted too."""
# misconception: counts_frozen

CHANGE = r'''
@@ -16,1 +16,1 @@ def count_parameters(model, trainable_only=True):
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    return sum(p.numel() for p in model.parameters())
'''
