# misconception: none
"""Misconception: averages the per-batch mean losses without weighting by
batch size, so a short last batch counts as much as a full one."""
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": int(epoch),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "cuda_rng": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler.load_state_dict(ckpt["scheduler"])
    torch.set_rng_state(ckpt["torch_rng"])
    if ckpt["cuda_rng"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(ckpt["cuda_rng"])
    return ckpt["epoch"]


def epoch_loss(model, loader, loss_fn):
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model(x), y).item()
            count += 1
    return total / count
