"""Misconception: only the weights (plus scheduler and RNG) are saved; the
optimizer restarts with empty moment/momentum buffers and its initial lr."""
# misconception: no_optimizer_state

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": int(epoch),
        "model": model.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    if ckpt["cuda_rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(ckpt["cuda_rng"])
    return ckpt["epoch"]
