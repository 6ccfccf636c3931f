# misconception: step_before_allreduce
"""Misconception: the optimizer steps right after backward, and the gradients
are combined afterwards, too late to matter."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad()
    n = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(n)
    loss = loss_fn(model(x), y)
    (loss * len(x) / n.item()).backward()
    optimizer.step()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / n.item()
