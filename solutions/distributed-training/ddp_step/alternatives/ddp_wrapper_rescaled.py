"""Correct: DistributedDataParallel does the all-reduce (it averages over ranks),
so each shard's loss is rescaled by world_size * n_rank / n_global first."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    ddp_model = DDP(model)
    counts = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(counts)
    optimizer.zero_grad()
    loss = loss_fn(ddp_model(x), y)
    (loss * (world_size * len(x) / counts.item())).backward()
    optimizer.step()
    stats = torch.tensor([loss.detach().item() * len(x)], dtype=torch.float64)
    dist.all_reduce(stats)
    return float(stats.item() / counts.item())
