"""Misconception: the cap is registered as a (persistent) buffer, so the model's state_dict has a
key ChattyMLP's lacks and a strict load_state_dict(chatty.state_dict()) fails."""
# misconception: extra_state

CHANGE = r'''
@@ -26,1 +27,1 @@ def __init__(self, d_in, d_hidden, d_out):
         self.fc2 = nn.Linear(d_hidden, d_out)
+        self.register_buffer("cap", torch.tensor(6.0))
@@ -29,4 +30,1 @@ def forward(self, x):
-        # clamping when nothing exceeds 6 changes nothing, so clamp always:
-        # no .item(), no print, no branch on a tensor's value
-        h = torch.relu(self.fc1(x)).clamp(max=6.0)
-        return self.fc2(h)
+        return self.fc2(torch.minimum(torch.relu(self.fc1(x)), self.cap))
'''
