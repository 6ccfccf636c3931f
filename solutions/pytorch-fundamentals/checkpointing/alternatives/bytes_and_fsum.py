"""Correct: the checkpoint is a list serialised to bytes in memory and written with open(); loaded
from the bytes with weights_only=True; epoch_loss collects per-batch weighted floats with grad
recording switched off by set_grad_enabled and adds them with math.fsum."""
import io
import math

import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    buffer = io.BytesIO()
    torch.save([epoch, model.state_dict(), optimizer.state_dict(), scheduler.state_dict(),
                torch.random.get_rng_state()], buffer)
    with open(path, "wb") as f:
        f.write(buffer.getvalue())


def load_checkpoint(path, model, optimizer, scheduler):
    with open(path, "rb") as f:
        epoch, model_sd, opt_sd, sched_sd, rng = torch.load(io.BytesIO(f.read()), weights_only=True)
    model.load_state_dict(model_sd)
    optimizer.load_state_dict(opt_sd)
    scheduler.load_state_dict(sched_sd)
    torch.random.set_rng_state(rng)
    return int(epoch)


def epoch_loss(model, loader, loss_fn):
    parts, n = [], 0
    with torch.set_grad_enabled(False):
        for x, y in loader:
            parts.append(float(loss_fn(model(x), y)) * y.shape[0])
            n += y.shape[0]
    return math.fsum(parts) / n
