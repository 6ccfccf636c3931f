# misconception: label_dtype
"""Converts the label with torch.from_numpy / as_tensor, which keeps the array's integer
dtype (int32 labels stay int32 instead of int64)."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -10,1 +9,1 @@ def __init__(self, X, y, sigma=0.1):
-        self.labels = torch.tensor(y, dtype=torch.int64)
+        self.labels = torch.from_numpy(np.array(y))
@@ -17,3 +16,1 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        return (self.images[i] + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), self.labels[i]
'''
