# misconception: none
"""Misconception: a rank with no valid example has nothing to contribute and
can return early; the other ranks then wait forever in the all_reduce it
never joins."""

CHANGE = r'''
@@ -12,4 +12,6 @@ def global_accuracy(logits, target, valid):
-    correct = ((logits.argmax(dim=1) == target) & valid).sum()
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    if not bool(valid.any()):
+        return 0.0
+    t = torch.tensor([float(((logits.argmax(1) == target) & valid).sum()), float(valid.sum())],
+                     dtype=torch.float64)
+    dist.all_reduce(t)
+    return (t[0] / t[1]).item()
'''
