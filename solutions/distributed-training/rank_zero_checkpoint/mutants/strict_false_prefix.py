# misconception: not_loaded
"""Misconception: keys saved with DDP's "module." prefix load fine with
strict=False (which silently loads nothing)."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        state = {f"module.{k}": v for k, v in model.state_dict().items()}
        torch.save({"model": state, "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()


def resume(path, model, optimizer):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"], strict=False)
    return int(ckpt["epoch"])
