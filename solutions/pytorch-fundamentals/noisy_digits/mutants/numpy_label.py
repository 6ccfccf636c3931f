# misconception: numpy_label
"""Returns the label as it comes from the NumPy array (a NumPy integer), not as a 0-d int64
tensor."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -10,1 +9,1 @@ def __init__(self, X, y, sigma=0.1):
-        self.labels = torch.tensor(y, dtype=torch.int64)
+        self.y = y
@@ -14,1 +13,1 @@ def __len__(self):
-        return len(self.labels)
+        return len(self.y)
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (self.images[i] + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), self.y[i]
'''
