"""Correct: gradients unscaled, then divided with torch._foreach_mul_ by 1/window; clipping by hand
(total norm from torch.linalg.vector_norm, one scale factor for all gradients); the skip detected by
comparing the scale before and after update (an overflow always lowers it)."""
import torch
from torch import nn


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    criterion = nn.CrossEntropyLoss(reduction="sum")
    params = [p for group in optimizer.param_groups for p in group["params"]]
    last = len(loader) - 1
    epoch_sum, epoch_n, window_n = 0.0, 0, 0
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast(device.type, dtype=amp_dtype):
            out = model(x)
            loss = criterion(out, y)
        scaler.scale(loss).backward()
        epoch_sum += loss.item()
        epoch_n += y.size(0)
        window_n += y.size(0)
        if (i + 1) % accum_steps and i != last:
            continue
        scaler.unscale_(optimizer)
        grads = [p.grad for p in params if p.grad is not None]
        torch._foreach_mul_(grads, 1.0 / window_n)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        factor = max_grad_norm / (norm + 1e-6)
        if factor < 1:
            torch._foreach_mul_(grads, factor)
        old_scale = scaler.get_scale()
        scaler.step(optimizer)
        scaler.update()
        if not scaler.get_scale() < old_scale:
            scheduler.step()
        for p in params:
            p.grad = None
        window_n = 0
    return epoch_sum / epoch_n
