# misconception: divides_by_max
"""Normalises by the largest value present in X (X / X.max()) instead of by 16: identical on
load_digits, where some pixel is always 16, wrong on data whose pixels never reach 16."""

CHANGE = r'''
@@ -8,2 +8,2 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        X = torch.tensor(X, dtype=torch.float32)
+        self.images = (X / X.max()).reshape(-1, 1, 8, 8)
@@ -18,2 +18,1 @@ def __getitem__(self, i):
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (clean + self.sigma * torch.randn(clean.shape)).clamp(0.0, 1.0), self.labels[i]
'''
