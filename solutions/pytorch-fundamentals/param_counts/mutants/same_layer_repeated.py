"""Misconception: builds one nn.Linear and repeats it n_layers times ([layer] * n), so all the
layers share a single set of weights."""
# misconception: shared_layer

CHANGE = r'''
@@ -22,1 +22,1 @@ def __init__(self, n_layers, width):
-        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
+        self.layers = nn.ModuleList([nn.Linear(width, width)] * n_layers)
'''
