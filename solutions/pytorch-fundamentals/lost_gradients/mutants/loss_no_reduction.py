# misconception: no_reduction
"""Misconception: the training loss keeps one value per example (reduction="none"): backward then needs a
gradient argument, and the loss is no single number to minimise."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    return F.cross_entropy(logits, target, reduction="none")
'''
