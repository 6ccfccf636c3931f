"""Misconception: second_derivative switches requires_grad on the caller's own x instead of on a detached
copy, so the caller's tensor requires grad afterwards (the derivatives themselves are right)."""
# misconception: flags_callers_x

CHANGE = r'''
@@ -27,1 +27,1 @@ def second_derivative(f, x):
-    x = x.detach().clone().requires_grad_(True)
+    x = x.requires_grad_(True)
'''
