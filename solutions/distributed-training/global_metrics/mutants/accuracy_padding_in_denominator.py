# misconception: padding_in_denominator
"""Misconception: masking the correct predictions is enough; the count still
includes the padding duplicates."""

CHANGE = r'''
@@ -12,4 +12,4 @@ def global_accuracy(logits, target, valid):
-    correct = ((logits.argmax(dim=1) == target) & valid).sum()
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    correct = ((logits.argmax(1) == target) & valid).sum()
+    t = torch.tensor([float(correct), float(target.numel())], dtype=torch.float64)
+    dist.all_reduce(t)
+    return (t[0] / t[1]).item()
'''
