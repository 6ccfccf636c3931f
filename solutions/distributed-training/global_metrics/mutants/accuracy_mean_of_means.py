# misconception: mean_of_means
"""Misconception: average the ranks' own accuracies."""
import torch
import torch.distributed as dist


def global_accuracy(logits, target, valid):
    hits = (logits.argmax(1) == target)[valid].double()
    t = torch.tensor([hits.mean().item()], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()
