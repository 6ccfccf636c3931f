# misconception: none
"""Misconception: all_gather each rank's per-example hits, although ranks hold different numbers of valid examples
(gloo aborts the ranks: all_gather needs the same shape on every rank)."""
import torch
import torch.distributed as dist


def global_accuracy(logits, target, valid):
    hits = (logits.argmax(dim=1) == target)[valid].double()
    out = [torch.zeros_like(hits) for _ in range(dist.get_world_size())]
    dist.all_gather(out, hits)
    return torch.cat(out).mean().item()
