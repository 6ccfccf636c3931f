# misconception: one_hot_num_classes
"""Writes the cross-entropy with F.one_hot(target) but without num_classes: it has only
max(target) + 1 columns, so it fails whenever a batch's targets miss the last class."""

CHANGE = r'''
@@ -24,1 +24,2 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    onehot = F.one_hot(target).to(logits.dtype)
+    return -(F.log_softmax(logits, dim=1) * onehot).sum(dim=1).mean()
'''
