# A sample submission for the distributed-training assignment (see README).
# %% [ddp_step]
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(n_global)
    loss = loss_fn(model(x), y)
    (loss * (len(x) / n_global.item())).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
    optimizer.step()
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / n_global.item()


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


# %% [sharding]
import math

import torch
from torch.utils.data import DataLoader, DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    sampler = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed,
                                 drop_last=False)
    sampler.set_epoch(epoch)
    return [int(i) for i in sampler]


def padding_mask(n, world_size, rank):
    per_rank = math.ceil(n / world_size)
    # position j of rank r is position r + j * world_size of the padded permutation
    return [rank + j * world_size >= n for j in range(per_rank)]


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    orders = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        orders.append([int(batch[0]) for batch in loader])
    return orders


# misconception: no_set_epoch
"""Misconception: the sampler reshuffles by itself every epoch; set_epoch is
never called."""
from torch.utils.data import DataLoader, DistributedSampler


def epoch_orders(n, world_size, rank, epochs, seed):
    dataset = list(range(n))
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=seed)
    loader = DataLoader(dataset, batch_size=1, sampler=sampler)
    return [[int(b[0]) for b in loader] for _ in range(epochs)]


# %% [global_metrics]
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    totals = torch.tensor([float(numerator), float(denominator)], dtype=torch.float64)
    dist.all_reduce(totals, op=dist.ReduceOp.SUM)
    return (totals[0] / totals[1]).item()


def global_accuracy(logits, target, valid):
    correct = ((logits.argmax(dim=1) == target) & valid).sum()
    counts = torch.tensor([float(correct), float(valid.sum())], dtype=torch.float64)
    dist.all_reduce(counts)
    return (counts[0] / counts[1]).item()


# misconception: counts_padding
"""Misconception: the valid mask can be ignored; padding duplicates are just
more examples."""
import torch
import torch.distributed as dist


def global_accuracy(logits, target, valid):
    t = torch.tensor([float((logits.argmax(1) == target).sum()), float(len(target))], dtype=torch.float64)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()


# %% [rank_zero_checkpoint]
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()  # every rank waits until the file is complete


def resume(path, model, optimizer):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return int(ckpt["epoch"])


# misconception: no_barrier
"""Misconception: the other ranks have nothing to write, so they can return at once."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)


# %% [lr_scaling]
def effective_batch(per_rank_batch, world_size, accum_steps=1):
    return int(per_rank_batch * world_size * accum_steps)


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    return float(base_lr * per_rank_batch * world_size / base_batch)

