# A sample submission for the distributed-training assignment (see README).
# %% [ddp_step]
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    """One data-parallel step on this rank's shard; returns the global mean loss."""
    raise NotImplementedError


# %% [sharding]
import torch
from torch.utils.data import DataLoader, DistributedSampler


def shard_indices(n, world_size, rank, epoch, seed):
    """The indices DistributedSampler gives `rank` in `epoch`."""
    raise NotImplementedError


def padding_mask(n, world_size, rank):
    """For each position of this rank's shard: is it a padding duplicate?"""
    raise NotImplementedError


def epoch_orders(n, world_size, rank, epochs, seed):
    """The indices this rank visits in each epoch of a correct training loop."""
    raise NotImplementedError


# %% [global_metrics]
import torch
import torch.distributed as dist


def global_mean(numerator, denominator):
    """Sum of all ranks' numerators over the sum of all ranks' denominators."""
    raise NotImplementedError


def global_accuracy(logits, target, valid):
    """Accuracy over every valid example of every rank."""
    raise NotImplementedError


# %% [rank_zero_checkpoint]
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    """Global rank 0 writes the checkpoint; no rank returns before it is complete."""
    raise NotImplementedError


def resume(path, model, optimizer):
    """Every rank loads the checkpoint; returns the saved epoch."""
    raise NotImplementedError


# %% [lr_scaling]
def effective_batch(per_rank_batch, world_size, accum_steps=1):
    """Examples per optimizer step."""
    raise NotImplementedError


def scaled_lr(base_lr, per_rank_batch, world_size, base_batch):
    """The linear scaling rule."""
    raise NotImplementedError

