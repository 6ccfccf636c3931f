# misconception: noise_divided
"""Adds the noise to the raw 0..16 pixels and divides the sum by 16: the noise shrinks to
sigma / 16."""

CHANGE = r'''
@@ -19,1 +20,8 @@ def __getitem__(self, i):
         return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+
+
+def _getitem(self, i):
+    raw = self.images[i] * 16
+    return ((raw + self.sigma * torch.randn(raw.shape)) / 16).clamp(0.0, 1.0), self.labels[i]
+
+
+NoisyDigits.__getitem__ = _getitem  # noqa: F821 - the reference's class, defined in the cell above
'''
