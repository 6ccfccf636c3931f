"""Misconception (tampering): keeps the chatty forward and replaces
torch.compile by a function returning the model unchanged, so that a
fullgraph compile 'succeeds'. The grader must not be fooled."""
# misconception: tampers_compile, print_in_forward, item_branch

CHANGE = r'''
@@ -29,3 +29,5 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
+        h = torch.relu(self.fc1(x))
+        peak = h.max().item()
+        print(f"peak hidden activation: {peak:.3f}")
+        if peak > 6.0:
+            h = h.clamp(max=6.0)
@@ -36,1 +38,10 @@ def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    return model
+
+
+def _no_compile(model=None, **kwargs):
+    if model is None:
+        return lambda m: m
+    return model
+
+
+torch.compile = _no_compile
'''
