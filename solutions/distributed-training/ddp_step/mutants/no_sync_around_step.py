# misconception: no_sync
"""Misconception: the whole step runs inside ddp_model.no_sync() (meant for the micro-batches of gradient
accumulation): the wrapper is called, yet its gradients are never all-reduced, so each rank steps on its own
shard."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    ddp_model = DDP(model)
    counts = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(counts)
    optimizer.zero_grad()
    with ddp_model.no_sync():
        loss = loss_fn(ddp_model(x), y)
        (loss * (world_size * len(x) / counts.item())).backward()
        optimizer.step()
    stats = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(stats)
    return stats.item() / counts.item()
