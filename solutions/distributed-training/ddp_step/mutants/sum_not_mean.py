# misconception: sum_not_mean
"""Misconception: all_reduce sums the gradients, and nothing divides them
afterwards: every rank steps with world_size times the mean gradient."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    optimizer.step()
    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
    dist.all_reduce(total)
    return (total[0] / total[1]).item()

