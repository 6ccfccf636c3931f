# misconception: ignores_sigma
"""Hard-codes the noise level 0.1 in __getitem__ and never uses the sigma argument."""

CHANGE = r'''
@@ -19,1 +20,8 @@ def __getitem__(self, i):
         return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+
+
+def _getitem(self, i):
+    clean = self.images[i]
+    return (clean + 0.1 * torch.randn(clean.shape)).clamp(0.0, 1.0), self.labels[i]
+
+
+NoisyDigits.__getitem__ = _getitem  # noqa: F821 - the reference's class, defined in the cell above
'''
