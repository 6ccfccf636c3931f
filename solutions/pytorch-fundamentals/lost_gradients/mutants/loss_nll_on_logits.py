# misconception: nll_on_logits
"""Misconception: F.nll_loss on raw logits, forgetting the log_softmax it expects."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    return F.nll_loss(logits, target)
'''
