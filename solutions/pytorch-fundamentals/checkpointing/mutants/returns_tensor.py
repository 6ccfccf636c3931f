"""Misconception: returns the mean as a 0-d tensor instead of a Python float."""
# misconception: not_python_float

CHANGE = r'''
@@ -33,1 +33,1 @@ def epoch_loss(model, loader, loss_fn):
-    return total / count
+    return torch.tensor(total / count)
'''
