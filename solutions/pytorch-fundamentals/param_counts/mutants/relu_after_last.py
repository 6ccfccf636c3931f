"""Misconception: ReLU is applied after every layer, the last one included."""
# misconception: relu_after_last

CHANGE = r'''
@@ -25,1 +25,1 @@ def forward(self, x):
-        for i, layer in enumerate(self.layers):
+        for layer in self.layers:
@@ -27,2 +27,1 @@ def forward(self, x):
-            if i < len(self.layers) - 1:
-                x = torch.relu(x)
+            x = torch.relu(x)
'''
