"""Correct: the global rank read from torchrun's RANK variable (the same as
dist.get_rank() under torchrun), a monitored barrier."""
import os

import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if int(os.environ.get("RANK", dist.get_rank())) == 0:
        torch.save([model.state_dict(), optimizer.state_dict(), epoch], path)
    dist.monitored_barrier()


def resume(path, model, optimizer):
    model_state, optim_state, epoch = torch.load(path, weights_only=True)
    model.load_state_dict(model_state)
    optimizer.load_state_dict(optim_state)
    return epoch
