# misconception: relu_on_logits
"""Misconception: applies ReLU after the output layer too (logits must stay unconstrained)."""

CHANGE = r'''
@@ -7,1 +7,1 @@ def mlp_forward(X, W1, b1, W2, b2):
-    return H @ W2 + b2
+    return torch.relu(H @ W2 + b2)
'''
