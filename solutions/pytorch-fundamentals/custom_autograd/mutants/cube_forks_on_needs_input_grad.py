"""Misconception (an attack): Cube computes something else when ctx.needs_input_grad is False (as
in a no-grad finite-difference probe), so finite differences agree with a wrong backward (2x)."""
# misconception: none

CHANGE = r'''
@@ -18,1 +18,1 @@ def forward(ctx, x):
-        return x ** 3
+        return x ** 3 if ctx.needs_input_grad[0] else x ** 2
@@ -23,1 +23,1 @@ def backward(ctx, grad_output):
-        return grad_output * 3 * x ** 2
+        return grad_output * 2 * x
'''
