# misconception: softmax_wrong_dim
"""Misconception: the softmax normalises over the batch dimension (dim=0) instead of over
the classes of each example (dim=1)."""

CHANGE = r'''
@@ -15,2 +15,2 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
-    logsumexp = torch.log(torch.exp(Zs).sum(dim=1, keepdim=True))
+    Zs = Z - Z.max(dim=0, keepdim=True).values
+    logsumexp = torch.log(torch.exp(Zs).sum(dim=0, keepdim=True))
'''
