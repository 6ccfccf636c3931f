# misconception: no_clamp
"""Forgets to clamp: noisy pixels leave the [0, 1] range."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return self.images[i] + self.sigma * torch.randn(1, 8, 8), self.labels[i]
'''
