# misconception: none
"""Misconception: all_gather each rank's per-example hits, although ranks hold different numbers of valid examples
(gloo aborts the ranks: all_gather needs the same shape on every rank)."""

CHANGE = r'''
@@ -12,4 +12,4 @@ def global_accuracy(logits, target, valid):
-    correct = ((logits.argmax(dim=1) == target) & valid).sum()
-    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
-    dist.all_reduce(counts)
-    return (counts[0] / counts[1]).item()
+    hits = (logits.argmax(dim=1) == target)[valid].double()
+    out = [torch.zeros_like(hits) for _ in range(dist.get_world_size())]
+    dist.all_gather(out, hits)
+    return torch.cat(out).mean().item()
'''
