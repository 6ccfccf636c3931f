# misconception: transposed
"""Misconception: NoisyDigits lays the 64 pixel values out column by column (the 8x8 image transposed)."""

CHANGE = r'''
@@ -8,2 +8,1 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
+        self.images = (torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16).transpose(2, 3).contiguous()
@@ -18,1 +17,1 @@ def __getitem__(self, i):
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
+        noise = torch.randn(clean.shape)
'''
