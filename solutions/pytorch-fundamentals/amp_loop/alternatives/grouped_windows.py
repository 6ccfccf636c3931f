"""Correct, window by window: the batches are first grouped into windows (itertools.islice over the
loader), each window's samples counted before its backward passes, the loss divided per window; the
skipped step is detected from scaler's found-inf state after unscale_; the running loss is a float64
tensor."""
import itertools

import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    batches = iter(loader)
    running = torch.zeros((), dtype=torch.float64)
    seen = 0
    while True:
        window = list(itertools.islice(batches, accum_steps))
        if not window:
            break
        n_window = sum(int(y.numel()) for _, y in window)
        for x, y in window:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device.type, dtype=amp_dtype):
                loss = F.cross_entropy(model(x), y, reduction="sum")
            running += loss.detach().double().cpu()
            seen += y.numel()
            scaler.scale(loss.float() / n_window).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.grad is not None], max_grad_norm)
        grads = [p.grad for p in model.parameters() if p.grad is not None]
        finite = all(bool(torch.isfinite(g).all()) for g in grads)
        scaler.step(optimizer)
        scaler.update()
        if finite:
            scheduler.step()
        optimizer.zero_grad(set_to_none=True)
    return (running / seen).item()
