"""Misconception: schoolbook rounding, ties away from zero (0.5 -> 1, -2.5 -> -3), instead of
torch.round's ties to even."""
# misconception: round_half_away

CHANGE = r'''
@@ -7,1 +7,1 @@ def forward(ctx, x):
-        return torch.round(x)
+        return torch.sign(x) * torch.floor(x.abs() + 0.5)
@@ -11,1 +11,1 @@ def backward(ctx, grad_output):
-        return grad_output          # straight through: d(round)/dx treated as 1
+        return grad_output
'''
