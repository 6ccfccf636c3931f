"""Misconception: removed the print but kept .item() and the Python `if` on
the scalar it returns; branching on a value read out of a tensor is a
data-dependent guard that dynamo cannot put in one graph."""
# misconception: item_branch

CHANGE = r'''
@@ -29,3 +29,4 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
+        h = torch.relu(self.fc1(x))
+        peak = h.max().item()
+        if peak > 6.0:
+            h = h.clamp(max=6.0)
'''
