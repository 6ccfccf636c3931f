# misconception: average_params, no_sync
"""Misconception: each rank steps on its own gradient and the parameters are
averaged afterwards, which looks equivalent but weighs every rank equally."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for p in model.parameters():
            dist.all_reduce(p)
            p /= world_size
    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
    dist.all_reduce(total)
    return (total[0] / total[1]).item()
