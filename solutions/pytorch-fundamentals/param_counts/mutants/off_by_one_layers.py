"""Misconception: n_layers counted as the number of hidden layers: builds n_layers + 1 Linear layers."""
# misconception: extra_layer

CHANGE = r'''
@@ -22,1 +22,1 @@ def __init__(self, n_layers, width):
-        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers)])
+        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(n_layers + 1)])
'''
