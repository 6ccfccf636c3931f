"""Misconception: saves the model object itself (torch.save(model)) instead of
its state_dict; that needs weights_only=False to load, i.e. arbitrary
unpickling, and breaks with code changes."""
# misconception: pickles_objects

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": int(epoch),
        "model": model,
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=False)
    model.load_state_dict(ckpt["model"].state_dict())
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    if ckpt["cuda_rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(ckpt["cuda_rng"])
    return ckpt["epoch"]
