# misconception: non_leaf
"""Misconception: requires_grad=True first, then .to(device, dtype): the result of .to()
is a new non-leaf tensor whenever it converts, so .grad never fills in."""

CHANGE = r'''
@@ -6,3 +6,1 @@ def make_leaf(shape, device="cpu", dtype=torch.float32):
-    # Create the tensor directly where and how it should live, then ask for grad:
-    # no operation ever touches it afterwards, so it stays a leaf.
-    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
+    return torch.randn(shape, requires_grad=True).to(device=device, dtype=dtype)
'''
