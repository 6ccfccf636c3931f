# misconception: unweighted_mean
"""Misconception: the gradients are averaged over ranks (divided by the world
size), as if every shard had the same size."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size
    optimizer.step()
    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
    dist.all_reduce(total)
    return (total[0] / total[1]).item()
