"""Misconception: compile_dynamic compiles a deep copy of the model, so the callable keeps the weights it
had when compiled: training the caller's model afterwards changes nothing in its outputs."""
# misconception: none

CHANGE = r'''
@@ -35,2 +35,4 @@ class CompileFriendlyMLP(nn.Module):
 def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    import copy
+
+    return torch.compile(copy.deepcopy(model), dynamic=True)
'''
