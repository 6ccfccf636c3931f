# misconception: not_torch_generator
"""Misconception: draws the values with NumPy's generator, so torch.manual_seed does not make
make_leaf reproducible (the values do not follow torch's global generator)."""

CHANGE = r'''
@@ -6,3 +6,2 @@ def make_leaf(shape, device="cpu", dtype=torch.float32):
-    # Create the tensor directly where and how it should live, then ask for grad:
-    # no operation ever touches it afterwards, so it stays a leaf.
-    return torch.randn(shape, device=device, dtype=dtype, requires_grad=True)
+    values = np.random.randn(*shape)
+    return torch.from_numpy(values).to(device=device, dtype=dtype).requires_grad_()
@@ -24,1 +24,3 @@ def training_loss(logits, target):
     return F.cross_entropy(logits, target)
+
+
+import numpy as np
'''
