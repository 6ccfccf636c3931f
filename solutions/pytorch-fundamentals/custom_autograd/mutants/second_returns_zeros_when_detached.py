"""Misconception: without create_graph the first derivative has no graph; the
code then 'handles' it by returning zeros, so every f gets f'' = 0."""
# misconception: no_create_graph

CHANGE = r'''
@@ -30,1 +30,1 @@ def second_derivative(f, x):
-        (d1,) = torch.autograd.grad(y.sum(), x, create_graph=True)
+        (d1,) = torch.autograd.grad(y.sum(), x)
'''
