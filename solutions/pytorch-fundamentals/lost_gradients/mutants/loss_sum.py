# misconception: sum_reduction
"""Misconception: sums the per-example cross-entropy instead of averaging it."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    return F.cross_entropy(logits, target, reduction="sum")
'''
