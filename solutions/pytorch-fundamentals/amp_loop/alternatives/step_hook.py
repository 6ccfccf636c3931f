"""Correct: counts the optimizer steps that really happened with a step post-hook (a skipped
scaler.step never calls optimizer.step), scales each batch's loss by the window's sample count
known in advance (the loader's batch sizes are read from its sampler), and torch._foreach_ ops."""
import torch
from torch import nn


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    n = len(loader.sampler)  # the samples it visits (a sampler may visit only some of the dataset)
    bs = loader.batch_size
    sizes = [min(bs, n - k) for k in range(0, n, bs)] if not loader.drop_last else [bs] * (n // bs)
    windows = [sum(sizes[k:k + accum_steps]) for k in range(0, len(sizes), accum_steps)]
    stepped = []
    handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: stepped.append(True))
    total, count = 0.0, 0
    try:
        optimizer.zero_grad(set_to_none=True)
        for i, (x, y) in enumerate(loader):
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast(device_type=device.type, dtype=amp_dtype):
                loss = loss_fn(model(x), y)
            scaler.scale(loss / windows[i // accum_steps]).backward()
            total += float(loss.detach())
            count += len(y)
            if (i + 1) % accum_steps == 0 or i + 1 == len(sizes):
                scaler.unscale_(optimizer)
                nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
                before = len(stepped)
                scaler.step(optimizer)
                scaler.update()
                if len(stepped) > before:
                    scheduler.step()
                optimizer.zero_grad(set_to_none=True)
    finally:
        handle.remove()
    return total / count
