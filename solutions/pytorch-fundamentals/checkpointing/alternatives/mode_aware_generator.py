"""Correct: save/load through a dict built with a comprehension over the stateful objects; epoch_loss
remembers the model's mode and restores it explicitly in a finally block (a defensive style), and
sums (loss * n) over a generator expression under inference_mode."""
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    parts = {"model": model, "optimizer": optimizer, "scheduler": scheduler}
    ckpt = {name: obj.state_dict() for name, obj in parts.items()}
    ckpt.update(epoch=epoch, rng_state=torch.get_rng_state())
    torch.save(ckpt, path)


def load_checkpoint(path, model, optimizer, scheduler):
    ckpt = torch.load(path, weights_only=True)
    for name, obj in {"model": model, "optimizer": optimizer, "scheduler": scheduler}.items():
        obj.load_state_dict(ckpt[name])
    torch.set_rng_state(ckpt["rng_state"])
    return int(ckpt["epoch"])


def epoch_loss(model, loader, loss_fn):
    was_training = model.training
    try:
        with torch.inference_mode():
            pairs = [(loss_fn(model(x), y).item(), len(y)) for x, y in loader]
    finally:
        model.train(was_training)
    return sum(v * n for v, n in pairs) / sum(n for _, n in pairs)
