# misconception: backward_arity
"""Misconception: the custom Function's backward returns gradients only for the weights, not one
entry (None allowed) per forward input."""

CHANGE = r'''
@@ -49,1 +49,1 @@ def backward(ctx, grad_loss):
-        return None, None, grad_loss * gW1, grad_loss * gb1, grad_loss * gW2, grad_loss * gb2
+        return grad_loss * gW1, grad_loss * gb1, grad_loss * gW2, grad_loss * gb2
'''
