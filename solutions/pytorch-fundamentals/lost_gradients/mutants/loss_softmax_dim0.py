# misconception: softmax_wrong_dim
"""Normalises over the wrong dimension: log_softmax over the batch (dim=0) instead of over each
example's classes (dim=1), then picks the target entries."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    return F.nll_loss(F.log_softmax(logits, dim=0), target)
'''
