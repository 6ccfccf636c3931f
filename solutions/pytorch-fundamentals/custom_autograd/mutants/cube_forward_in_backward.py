"""Misconception: Cube's backward multiplies the upstream gradient by the forward value x^3
instead of by the derivative 3x^2."""
# misconception: cube_forward_in_backward

CHANGE = r'''
@@ -23,1 +23,1 @@ def backward(ctx, grad_output):
-        return grad_output * 3 * x ** 2
+        return grad_output * x ** 3
'''
