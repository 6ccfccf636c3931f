# misconception: accuracy_loss
"""Misconception: trains on 1 - accuracy built from argmax, which has no gradient."""

CHANGE = r'''
@@ -24,1 +24,2 @@ def training_loss(logits, target):
-    return F.cross_entropy(logits, target)
+    acc = (logits.argmax(dim=1) == target).to(logits.dtype).mean()
+    return (1 - acc).requires_grad_()
'''
