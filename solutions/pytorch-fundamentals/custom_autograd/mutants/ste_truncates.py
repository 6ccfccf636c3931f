"""Misconception: rounds by truncation (x.long(), then back to x's dtype),
which is not rounding to the nearest integer (1.7 -> 1, -2.6 -> -2)."""
# misconception: truncates

CHANGE = r'''
@@ -7,1 +7,1 @@ def forward(ctx, x):
-        return torch.round(x)
+        return x.long().to(x.dtype)
'''
