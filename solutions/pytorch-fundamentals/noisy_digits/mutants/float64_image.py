# misconception: float64_image
"""Builds the image from the float64 NumPy data and never casts: the image is float64
instead of float32."""

CHANGE = r'''
@@ -8,2 +8,1 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        self.X = np.asarray(X, dtype=np.float64)
@@ -17,3 +16,3 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        clean = torch.from_numpy(self.X[i].reshape(1, 8, 8) / 16)
+        noise = torch.randn(1, 8, 8, dtype=torch.float64)
+        return (clean + self.sigma * noise).clamp(0, 1), self.labels[i]
'''
