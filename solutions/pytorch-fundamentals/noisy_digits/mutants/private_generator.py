# misconception: private_generator
"""Uses a private torch.Generator created in __init__: torch.manual_seed does not reproduce
it, and forked DataLoader workers inherit identical generator states (identical noise)."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -11,1 +11,1 @@ def __init__(self, X, y, sigma=0.1):
         self.sigma = sigma
+        self.gen = torch.Generator().manual_seed(1234)
@@ -17,3 +17,2 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        noise = torch.randn(1, 8, 8, generator=self.gen)
+        return (self.images[i] + self.sigma * noise).clamp(0, 1), self.labels[i]
'''
