# misconception: no_optimizer_state
"""Misconception: the weights are the whole state of training."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()


def resume(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    return int(ckpt["epoch"])
