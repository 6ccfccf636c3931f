# misconception: noise_in_init
"""Draws the noise once in __init__ (a fixed noisy copy of the data): every access to ds[i]
returns the same image, and DataLoader workers all see identical noise."""

CHANGE = r'''
@@ -8,2 +8,2 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        clean = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        self.images = (clean + sigma * torch.randn(clean.shape)).clamp(0, 1)
@@ -11,1 +11,0 @@ def __init__(self, X, y, sigma=0.1):
-        self.sigma = sigma
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return self.images[i], self.labels[i]
'''
