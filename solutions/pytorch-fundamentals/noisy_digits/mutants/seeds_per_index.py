# misconception: seeds_per_index
"""Misconception: torch.manual_seed(i) inside __getitem__ "for reproducibility": every access of ds[i] then
draws the same noise."""

CHANGE = r'''
@@ -8,1 +8,0 @@ def __init__(self, X, y, sigma=0.1):
-        # torch.tensor copies, so the caller's arrays are never touched.
@@ -16,1 +16,1 @@ def __getitem__(self, i):
     def __getitem__(self, i):
+        torch.manual_seed(i)
@@ -18,1 +18,1 @@ def __getitem__(self, i):
-        noise = torch.randn(clean.shape)  # torch's global generator, fresh per access
+        noise = torch.randn(clean.shape)
'''
