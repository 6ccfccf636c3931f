# misconception: ignores_upstream
"""Misconception: the custom Function's backward returns the loss gradients but ignores the
upstream gradient grad_output (fine only for loss.backward() with a unit seed)."""

CHANGE = r'''
@@ -49,1 +49,1 @@ def backward(ctx, grad_loss):
-        return None, None, grad_loss * gW1, grad_loss * gb1, grad_loss * gW2, grad_loss * gb2
+        return None, None, gW1, gb1, gW2, gb2
'''
