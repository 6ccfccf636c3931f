"""Correct: rank 0 collects the weighted gradients with reduce, divides, and
broadcasts them back; every rank then steps with the same gradient."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss_sum = loss * x.shape[0]
    loss_sum.backward()
    stats = torch.tensor([loss_sum.item(), float(x.shape[0])], dtype=torch.float64)
    dist.reduce(stats, dst=0)
    dist.broadcast(stats, src=0)
    for p in model.parameters():
        dist.reduce(p.grad, dst=0)
        if rank == 0:
            p.grad /= stats[1].item()
        dist.broadcast(p.grad, src=0)
    optimizer.step()
    return (stats[0] / stats[1]).item()
