"""Misconception: floor is taken for rounding (2.7 -> 2 instead of 3)."""
# misconception: floor

CHANGE = r'''
@@ -7,1 +7,1 @@ def forward(ctx, x):
-        return torch.round(x)
+        return torch.floor(x)
@@ -11,1 +11,1 @@ def backward(ctx, grad_output):
-        return grad_output          # straight through: d(round)/dx treated as 1
+        return grad_output
'''
