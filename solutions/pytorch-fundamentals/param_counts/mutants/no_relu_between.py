"""Misconception: the layers are chained without the ReLU between them (a stack of linear layers
is itself just one linear map)."""
# misconception: no_relu

CHANGE = r'''
@@ -25,1 +25,1 @@ def forward(self, x):
-        for i, layer in enumerate(self.layers):
+        for layer in self.layers:
@@ -27,2 +27,0 @@ def forward(self, x):
-            if i < len(self.layers) - 1:
-                x = torch.relu(x)
'''
