"""Misconception: Cube saves its output y = x^3 and recovers x^2 from it as y ** (2/3) in backward (NaN
wherever x is negative)."""
# misconception: cube_root_of_output

CHANGE = r'''
@@ -17,2 +17,3 @@ def forward(ctx, x):
-        ctx.save_for_backward(x)
-        return x ** 3
+        y = x ** 3
+        ctx.save_for_backward(y)
+        return y
@@ -22,2 +23,2 @@ def backward(ctx, grad_output):
-        (x,) = ctx.saved_tensors
-        return grad_output * 3 * x ** 2
+        (y,) = ctx.saved_tensors
+        return grad_output * 3 * y ** (2 / 3)
'''
