# misconception: mean_of_means
"""Misconception: average the ranks' own accuracies."""

CHANGE = r'''
@@ -12,4 +12,4 @@ def global_accuracy(logits, target, valid):
-    correct = ((logits.argmax(dim=1) == target) & valid).sum()
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    hits = (logits.argmax(1) == target)[valid].double()
+    t = torch.tensor([hits.mean().item()], dtype=torch.float64)
+    dist.all_reduce(t)
+    return t.item() / dist.get_world_size()
'''
