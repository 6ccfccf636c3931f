# misconception: modifies_input
"""Normalises the caller's array in place (X /= 16) and keeps a reference to it: the
caller's X is modified."""

CHANGE = r'''
@@ -8,3 +8,3 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
-        self.images = torch.tensor(X, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16
-        self.labels = torch.tensor(y, dtype=torch.int64)
+        X /= 16
+        self.X = X
+        self.y = y
@@ -14,1 +14,1 @@ def __len__(self):
-        return len(self.labels)
+        return len(self.X)
@@ -17,3 +17,2 @@ def __getitem__(self, i):
-        clean = self.images[i]
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
-        return (clean + self.sigma * noise).clamp(0.0, 1.0), self.labels[i]
+        clean = torch.from_numpy(self.X[i]).float().reshape(1, 8, 8)
+        return (clean + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), torch.tensor(int(self.y[i]))
'''
