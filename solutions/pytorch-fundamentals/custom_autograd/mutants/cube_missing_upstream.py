"""Misconception: Cube's backward returns the local derivative 3x^2 and
forgets to multiply it by the upstream gradient grad_output."""
# misconception: cube_ignores_upstream

CHANGE = r'''
@@ -23,1 +23,1 @@ def backward(ctx, grad_output):
-        return grad_output * 3 * x ** 2
+        return 3 * x ** 2
'''
