"""Misconception: returns the model itself (never compiled), so nothing is
recompiled because nothing is compiled."""
# misconception: not_compiled

CHANGE = r'''
@@ -36,1 +36,1 @@ def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    return model
'''
