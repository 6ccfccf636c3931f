"""Misconception: rounding as floor(x + 0.5), which sends every tie up (0.5 -> 1, -2.5 -> -2)
instead of to the even neighbour as torch.round does (0.5 -> 0, 1.5 -> 2, -2.5 -> -2)."""
# misconception: round_half_up

CHANGE = r'''
@@ -7,1 +7,1 @@ def forward(ctx, x):
-        return torch.round(x)
+        return torch.floor(x + 0.5)
@@ -11,1 +11,1 @@ def backward(ctx, grad_output):
-        return grad_output          # straight through: d(round)/dx treated as 1
+        return grad_output
'''
