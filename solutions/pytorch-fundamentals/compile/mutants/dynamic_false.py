"""Misconception: dynamic=False is taken to mean 'do not recompile'; it forces a static graph per
input shape, so every new batch size recompiles."""
# misconception: recompiles

CHANGE = r'''
@@ -36,1 +36,1 @@ def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    return torch.compile(model, dynamic=False)
'''
