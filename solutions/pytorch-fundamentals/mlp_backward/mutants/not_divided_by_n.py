# misconception: not_averaged
"""Misconception: forgets that the loss is a mean over the batch: dZ = softmax - onehot is not
divided by n."""

CHANGE = r'''
@@ -21,1 +21,0 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    dZ = dZ / n
'''
