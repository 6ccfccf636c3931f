# misconception: ignores_dtype
"""Misconception: make_leaf forgets the dtype argument (always float32)."""

CHANGE = r'''
@@ -6,3 +6,1 @@ def make_leaf(shape, device="cpu", dtype=torch.float32):
-    # Create the tensor directly where and how it should live, then ask for grad:
-    # no operation ever touches it afterwards, so it stays a leaf.
-    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
+    return torch.randn(shape, device=device, requires_grad=True)
'''
