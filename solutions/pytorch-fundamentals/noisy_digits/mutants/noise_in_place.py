# misconception: noise_accumulates
"""Misconception: the noise is added in place to the stored image (self.images[i] += ...), so it builds up over
reads instead of being fresh noise on the clean image."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -17,3 +16,3 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        image = self.images[i]
+        image += self.sigma * torch.randn(image.shape)
+        return image.clamp(0.0, 1.0), self.labels[i]
'''
