# misconception: no_divide
"""Forgets to divide the 0..16 pixel values by 16 (then clamps, so most of the digit
saturates at 1)."""

CHANGE = r'''
@@ -8,2 +8,1 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8)
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (self.images[i] + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), self.labels[i]
'''
