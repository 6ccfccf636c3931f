"""Misconception: the layers are kept in a plain Python list, so nn.Module never registers them (no
parameters, no state_dict entries, .to() skips them)."""
# misconception: unregistered_layers

CHANGE = r'''
@@ -22,1 +22,1 @@ def __init__(self, n_layers, width):
-        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
+        self.layers = [nn.Linear(width, width) for _ in range(n_layers)]
'''
