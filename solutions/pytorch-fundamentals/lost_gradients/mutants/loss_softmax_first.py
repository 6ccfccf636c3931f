# misconception: softmax_twice
"""Misconception: applies softmax before F.cross_entropy, which already applies log_softmax
(probabilities are treated as logits)."""

CHANGE = r'''
@@ -24,1 +24,1 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    return F.cross_entropy(torch.softmax(logits, dim=1), target)
'''
