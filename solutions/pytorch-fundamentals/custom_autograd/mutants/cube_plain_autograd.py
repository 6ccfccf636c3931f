"""Misconception: Cube is a plain class whose apply computes x ** 3 and lets autograd derive the gradient,
instead of a torch.autograd.Function subclass with a hand-written backward (values and gradients are right)."""
# misconception: cube_not_a_function

CHANGE = r'''
@@ -14,10 +14,4 @@
-class Cube(torch.autograd.Function):
-    @staticmethod
-    def forward(ctx, x):
-        ctx.save_for_backward(x)
-        return x ** 3
-
-    @staticmethod
-    def backward(ctx, grad_output):
-        (x,) = ctx.saved_tensors
-        return grad_output * 3 * x ** 2
+class Cube:
+    @staticmethod
+    def apply(x):
+        return x ** 3
'''
