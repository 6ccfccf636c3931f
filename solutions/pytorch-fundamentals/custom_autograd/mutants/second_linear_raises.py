"""Misconception: the first derivative of a linear f is a constant with no graph, and the second
torch.autograd.grad call on it raises instead of giving zeros."""
# misconception: linear_raises

CHANGE = r'''
@@ -29,4 +29,1 @@ def second_derivative(f, x):
-        y = f(x)
-        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
-        if not d1.requires_grad:      # f linear: f' does not depend on x
-            return torch.zeros_like(x).detach()
+        (d1,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)
'''
