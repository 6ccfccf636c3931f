# misconception: counts_padding
"""Misconception: the valid mask can be ignored; padding duplicates are just
more examples."""

CHANGE = r'''
@@ -12,4 +12,3 @@ def global_accuracy(logits, target, valid):
-    correct = ((logits.argmax(dim=1) == target) & valid).sum()
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    t = torch.tensor([float((logits.argmax(1) == target).sum()), float(len(target))], dtype=torch.float64)
+    dist.all_reduce(t)
+    return (t[0] / t[1]).item()
'''
