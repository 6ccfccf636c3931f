"""Misconception: the backward returns round's true derivative (zero almost
everywhere), which is exactly what the straight-through estimator avoids."""
# misconception: ste_zero_grad

CHANGE = r'''
@@ -11,1 +11,1 @@ def backward(ctx, grad_output):
-        return grad_output          # straight through: d(round)/dx treated as 1
+        return torch.zeros_like(grad_output)
'''
