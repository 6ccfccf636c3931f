"""Misconception: stops after one differentiation and returns the first derivative f'(x)."""
# misconception: first_derivative

CHANGE = r'''
@@ -29,6 +29,2 @@ def second_derivative(f, x):
-        y = f(x)
-        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
-        if not d1.requires_grad:      # f linear: f' does not depend on x
-            return torch.zeros_like(x).detach()
-        (d2,) = torch.autograd.grad(d1.sum(), x)
-    return d2.detach()
+        (d1,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
+    return d1.detach()
'''
