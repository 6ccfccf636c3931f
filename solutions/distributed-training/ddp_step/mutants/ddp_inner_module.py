# misconception: no_sync
"""Misconception: the model is wrapped in DistributedDataParallel, but the
forward pass calls ddp_model.module, so DDP's gradient hooks never run and
each rank steps on its own shard's gradient."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    ddp_model = DDP(model)
    counts = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(counts)
    optimizer.zero_grad()
    loss = loss_fn(ddp_model.module(x), y)
    (loss * (world_size * len(x) / counts.item())).backward()
    optimizer.step()
    stats = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(stats)
    return stats.item() / counts.item()
