# misconception: weights_only
"""Misconception: saving the optimizer object itself is simplest; but
weights_only loading refuses arbitrary pickled objects."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer, "epoch": epoch}, path)
    dist.barrier()


def resume(path, model, optimizer):
    ckpt = torch.load(path, weights_only=False)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"].state_dict())
    return int(ckpt["epoch"])
