# misconception: no_hidden_relu
"""Misconception: mlp_forward leaves out the ReLU between the layers (two linear layers in a row)."""

CHANGE = r'''
@@ -5,3 +5,1 @@ def mlp_forward(X, W1, b1, W2, b2):
-    A = X @ W1 + b1
-    H = torch.relu(A)
-    return H @ W2 + b2
+    return (X @ W1 + b1) @ W2 + b2
'''
