"""Misconception: the layers live in an nn.Sequential (parameter names net.0.*, net.3.*), so
ChattyMLP's state_dict (fc1.*, fc2.*) does not load strictly; otherwise right (torch.where)."""
# misconception: renamed_layers

CHANGE = r'''
@@ -25,2 +25,2 @@ def __init__(self, d_in, d_hidden, d_out):
-        self.fc1 = nn.Linear(d_in, d_hidden)
-        self.fc2 = nn.Linear(d_hidden, d_out)
+        self.net = nn.Sequential(nn.Linear(d_in, d_hidden), nn.ReLU(), _Cap(),
+                                 nn.Linear(d_hidden, d_out))
@@ -29,4 +29,1 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
-        return self.fc2(h)
+        return self.net(x)
@@ -36,1 +33,6 @@ def compile_dynamic(model):
-    return torch.compile(model, dynamic=True)
+    return torch.compile(model, backend="eager", dynamic=True, fullgraph=True)
+
+
+class _Cap(nn.Module):
+    def forward(self, h):
+        return torch.where(h > 6.0, torch.full_like(h, 6.0), h)
'''
