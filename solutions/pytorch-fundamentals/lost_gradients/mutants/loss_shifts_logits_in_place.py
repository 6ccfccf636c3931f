# misconception: modifies_input
"""Misconception: the logits are stabilised in place (logits -= max) before the loss: the value is right (the
shift cancels), but the caller's logits are changed."""

CHANGE = r'''
@@ -23,1 +24,2 @@ def training_loss(logits, target):
 def training_loss(logits, target):
+    with torch.no_grad():
+        logits -= logits.max(dim=1, keepdim=True).values
'''
