"""Misconception: the cap at 6 is applied to the output logits instead of the hidden activations."""
# misconception: clamp_output

CHANGE = r'''
@@ -29,4 +29,1 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
-        return self.fc2(h)
+        return self.fc2(torch.relu(self.fc1(x))).clamp(max=6.0)
'''
