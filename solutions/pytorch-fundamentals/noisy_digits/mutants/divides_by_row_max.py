# misconception: divides_by_row_max
"""Normalises every image by its own brightest pixel (per-image min-max style) instead of by
16: faint digits are stretched to full brightness."""

CHANGE = r'''
@@ -8,2 +8,3 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        X = torch.tensor(X, dtype=torch.float32)
+        row_max = X.max(dim=1, keepdim=True).values.clamp(min=1e-12)
+        self.images = (X / row_max).reshape(-1, 1, 8, 8)
@@ -18,2 +19,1 @@ def __getitem__(self, i):
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (clean + self.sigma * torch.randn(clean.shape)).clamp(0.0, 1.0), self.labels[i]
'''
