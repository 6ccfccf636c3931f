# misconception: reversed_layers
"""Misconception: LayerStack's forward walks its layers from the last to the first."""

CHANGE = r'''
@@ -25,1 +25,2 @@ def forward(self, x):
-        for i, layer in enumerate(self.layers):
+        layers = list(self.layers)[::-1]
+        for i, layer in enumerate(layers):
@@ -27,1 +28,1 @@ def forward(self, x):
-            if i < len(self.layers) - 1:
+            if i < len(layers) - 1:
@@ -29,1 +31,3 @@ def forward(self, x):
         return x
+
+
+import torch.nn as nn
'''
