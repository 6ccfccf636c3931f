# misconception: one_hot_num_classes
"""Builds dL/dZ as softmax minus F.one_hot(y) without num_classes: the one-hot matrix has only
max(y) + 1 columns, so it fails whenever the batch's targets miss the last class."""

CHANGE = r'''
@@ -15,3 +15,1 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    Zs = Z - Z.max(dim=1, keepdim=True).values  # stable softmax
-    logsumexp = torch.log(torch.exp(Zs).sum(dim=1, keepdim=True))
-    logP = Zs - logsumexp
+    logP = torch.log_softmax(Z, dim=1)
@@ -19,12 +17,3 @@ def _forward_backward(X, y, W1, b1, W2, b2):
-    dZ = torch.exp(logP)
-    dZ[torch.arange(n), y] -= 1
-    dZ = dZ / n
-    grads = {
-        "W2": H.T @ dZ,
-        "b2": dZ.sum(dim=0),
-    }
-    dH = dZ @ W2.T
-    dA = dH * (A > 0).to(dH.dtype)
-    grads["W1"] = X.T @ dA
-    grads["b1"] = dA.sum(dim=0)
-    return loss, grads
+    dZ = (torch.exp(logP) - F.one_hot(y).to(Z.dtype)) / n
+    dA = (dZ @ W2.T) * (A > 0).to(Z.dtype)
+    return loss, {"W1": X.T @ dA, "b1": dA.sum(0), "W2": H.T @ dZ, "b2": dZ.sum(0)}
@@ -53,1 +43,3 @@ def mlp_loss(X, y, W1, b1, W2, b2):
     return _MLPLoss.apply(X, y, W1, b1, W2, b2)
+
+
+import torch.nn.functional as F
'''
