# misconception: uniform_values
"""Misconception: torch.rand (uniform on [0, 1)) used where a standard normal tensor is required."""

CHANGE = r'''
@@ -6,3 +6,1 @@ def make_leaf(shape, device="cpu", dtype=torch.float32):
-    # Create the tensor directly where and how it should live, then ask for grad:
-    # no operation ever touches it afterwards, so it stays a leaf.
-    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
+    return torch.rand(shape, device=device, dtype=dtype, requires_grad=True)
'''
