"""Misconception: takes the first derivative without create_graph=True, so it
is not differentiable and the second torch.autograd.grad call fails."""
# misconception: no_create_graph

CHANGE = r'''
@@ -30,3 +30,1 @@ def second_derivative(f, x):
-        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
-        if not d1.requires_grad:      # f linear: f' does not depend on x
-            return torch.zeros_like(x).detach()
+        (d1,) = torch.autograd.grad(y.sum(), x)
'''
