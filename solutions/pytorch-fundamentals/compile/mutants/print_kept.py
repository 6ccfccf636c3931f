"""Misconception: removed .item() and the branch but kept a debug print;
print is a graph break for torch.compile."""
# misconception: print_in_forward

CHANGE = r'''
@@ -29,2 +29,0 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
@@ -31,1 +30,1 @@ def forward(self, x):
         h = torch.relu(self.fc1(x)).clamp(max=6.0)
+        print("peak hidden activation:", h.max())
'''
