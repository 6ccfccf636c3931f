"""Misconception: the straight-through backward returns ones (the identity's
local derivative) instead of multiplying by the upstream gradient."""
# misconception: ste_ignores_upstream

CHANGE = r'''
@@ -11,1 +11,1 @@ def backward(ctx, grad_output):
-        return grad_output          # straight through: d(round)/dx treated as 1
+        return torch.ones_like(grad_output)
'''
