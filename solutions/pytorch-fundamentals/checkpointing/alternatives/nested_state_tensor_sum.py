"""Correct: a nested checkpoint ({"state": {...}, "meta": {...}}) with the RNG state stored as a
plain list of ints; epoch_loss accumulates detached float64 tensors (each batch's graph is freed as
soon as its loss is detached) and converts once at the end."""
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    state = {"model": model.state_dict(), "optim": optimizer.state_dict(), "sched": scheduler.state_dict()}
    meta = {"epoch": epoch, "rng": torch.get_rng_state().tolist()}
    torch.save({"state": state, "meta": meta}, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["state"]["model"])
    optimizer.load_state_dict(ckpt["state"]["optim"])
    scheduler.load_state_dict(ckpt["state"]["sched"])
    torch.set_rng_state(torch.tensor(ckpt["meta"]["rng"], dtype=torch.uint8))
    return ckpt["meta"]["epoch"]


def epoch_loss(model, loader, loss_fn):
    total = torch.zeros((), dtype=torch.float64)
    count = 0
    for x, y in loader:
        loss = loss_fn(model(x), y).detach()
        total = total + loss.double() * len(y)
        count += len(y)
    return (total / count).item()
