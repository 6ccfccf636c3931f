"""Correct: group the batches into windows first, so each window's sample
count is known before backward and the loss itself is divided by it; an
overflow is detected from the (non-finite) norm returned by clipping."""
import torch
import torch.nn.functional as F


def _windows(loader, accum_steps):
    window = []
    for batch in loader:
        window.append(batch)
        if len(window) == accum_steps:
            yield window
            window = []
    if window:
        yield window


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    losses = []
    n_seen = 0
    for window in _windows(loader, accum_steps):
        n_window = sum(len(y) for _, y in window)
        for x, y in window:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=amp_dtype):
                out = model(x)
            # the loss outside autocast, on float32 logits
            loss = F.cross_entropy(out.float(), y, reduction="sum")
            scaler.scale(loss / n_window).backward()
            losses.append(loss.detach())
            n_seen += len(y)
        scaler.unscale_(optimizer)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
        finite = bool(torch.isfinite(norm))
        scaler.step(optimizer)
        scaler.update()
        if finite:
            scheduler.step()
        for p in model.parameters():
            p.grad = None
    return float(torch.stack(losses).sum().item() / n_seen)
