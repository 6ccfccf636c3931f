# misconception: numpy_noise
"""Draws the noise with NumPy (np.random.normal) instead of torch's global generator:
torch.manual_seed does not make it reproducible."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -17,3 +16,2 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        noise = torch.from_numpy(np.random.normal(size=(1, 8, 8)).astype(np.float32))
+        return (self.images[i] + self.sigma * noise).clamp(0, 1), self.labels[i]
'''
