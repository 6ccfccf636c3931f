# misconception: unweighted_mean
"""Misconception: wrapping the model in DistributedDataParallel is enough;
but DDP divides the summed gradients by the world size, which is the global
mean only when every shard has the same size."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    ddp = DDP(model)
    optimizer.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    optimizer.step()
    total = torch.tensor([loss.item() * len(x), float(len(x))], dtype=torch.float64)
    dist.all_reduce(total)
    return (total[0] / total[1]).item()
