"""Misconception: dropped .item() and print but kept a Python `if` on a
tensor's value (`if h.max() > 6`), a data-dependent branch."""
# misconception: tensor_branch

CHANGE = r'''
@@ -29,3 +29,3 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
+        h = torch.relu(self.fc1(x))
+        if h.max() > 6.0:
+            h = h.clamp(max=6.0)
'''
