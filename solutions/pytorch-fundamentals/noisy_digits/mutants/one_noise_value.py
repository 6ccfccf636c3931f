# misconception: one_noise_value
"""Draws one noise value per image (torch.randn(1)) and adds it to every pixel, instead of
independent noise per pixel."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (self.images[i] + self.sigma * torch.randn(1)).clamp(0, 1), self.labels[i]
'''
