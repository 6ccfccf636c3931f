"""Misconception: counts the entries of state_dict(), which include buffers (BatchNorm running
statistics, num_batches_tracked) and list tied weights under every name."""
# misconception: counts_state_dict, counts_buffers

CHANGE = r'''
@@ -16,1 +16,3 @@ def count_parameters(model, trainable_only=True):
-    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
+    sd = model.state_dict(keep_vars=True)
+    return sum(t.numel() for t in sd.values()
+               if not trainable_only or t.requires_grad or not isinstance(t, nn.Parameter))
'''
