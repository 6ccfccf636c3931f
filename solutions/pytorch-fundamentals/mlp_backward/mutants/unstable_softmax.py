# misconception: unstable_exp
"""Misconception: softmax computed as exp(Z) / sum exp(Z) without subtracting the row maximum:
overflows to inf/nan for large logits."""

CHANGE = r'''
@@ -15,1 +15,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
+    Zs = Z
'''
