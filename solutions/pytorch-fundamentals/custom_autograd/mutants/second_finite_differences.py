"""Misconception: approximates the second derivative with a central finite
difference of f instead of differentiating through autograd (inexact)."""
# misconception: finite_differences

CHANGE = r'''
@@ -27,8 +27,3 @@ def second_derivative(f, x):
-    x = x.detach().clone().requires_grad_(True)
-    with torch.enable_grad():
-        y = f(x)
-        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
-        if not d1.requires_grad:      # f linear: f' does not depend on x
-            return torch.zeros_like(x).detach()
-        (d2,) = torch.autograd.grad(d1.sum(), x)
-    return d2.detach()
+    h = 1e-4
+    with torch.no_grad():
+        return (f(x + h) - 2 * f(x) + f(x - h)) / h ** 2
'''
