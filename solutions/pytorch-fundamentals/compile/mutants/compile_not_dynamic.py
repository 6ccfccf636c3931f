"""Misconception: torch.compile without dynamic=True (or mark_dynamic)
specializes on the first batch size and recompiles for the next one."""
# misconception: recompiles

CHANGE = r'''
@@ -36,1 +36,1 @@ def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    return torch.compile(model, backend="aot_eager")
'''
