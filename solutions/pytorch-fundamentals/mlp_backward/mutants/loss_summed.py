# misconception: sum_reduction
"""Misconception: mlp_loss's forward sums the per-example losses over the batch instead of averaging them
(its hand-written backward is still the mean's)."""

CHANGE = r'''
@@ -18,1 +18,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    loss = -logP[torch.arange(n), y].mean()
+    loss = -logP[torch.arange(n), y].sum()
'''
