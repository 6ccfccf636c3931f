"""Correct: one-batch lookahead to spot the last batch (no len(loader)), the
gradients divided by the window's sample count while still scaled, an
explicit finiteness check of the unscaled gradients, and the running loss
kept as a detached float64 tensor."""
import torch
import torch.nn as nn


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    criterion = nn.CrossEntropyLoss(reduction="sum")
    params = [p for p in model.parameters() if p.requires_grad]
    running = torch.zeros((), dtype=torch.float64)
    seen = 0
    in_window = 0
    window_n = 0
    it = iter(loader)
    nxt = next(it, None)
    while nxt is not None:
        x, y = nxt
        nxt = next(it, None)
        x, y = x.to(device), y.to(device)
        with torch.autocast(device.type, dtype=amp_dtype, enabled=True):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        running += loss.detach().double().cpu()
        seen += len(y)
        window_n += len(y)
        in_window += 1
        if in_window == accum_steps or nxt is None:
            for p in params:
                if p.grad is not None:
                    p.grad.mul_(1.0 / window_n)
            scaler.unscale_(optimizer)
            ok = all(bool(torch.isfinite(p.grad).all()) for p in params if p.grad is not None)
            nn.utils.clip_grad_norm_(params, max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            if ok:
                scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            in_window = 0
            window_n = 0
    return (running / seen).item()
