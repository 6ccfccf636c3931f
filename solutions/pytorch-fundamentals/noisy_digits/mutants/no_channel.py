# misconception: no_channel
"""Returns an (8, 8) image, forgetting the channel dimension (1, 8, 8)."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (self.images[i][0] + self.sigma * torch.randn(8, 8)).clamp(0, 1), self.labels[i]
'''
