"""Misconception: bypasses the GradScaler (plain backward and optimizer.step),
so an overflowing step is applied and poisons the weights with inf/nan."""
# misconception: ignores_scaler

import torch
import torch.nn as nn


def train_epoch(model, loader, optimizer, scheduler, scaler, *, device,
                accum_steps, amp_dtype, max_grad_norm=1.0):
    model.train()
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    n_batches = len(loader)
    total_loss, total_samples, window_samples = 0.0, 0, 0
    optimizer.zero_grad(set_to_none=True)
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        with torch.autocast(device.type, dtype=amp_dtype):
            logits = model(x)
            loss = loss_fn(logits, y)          # a sum over the batch
        loss.backward()
        total_loss += loss.item()
        total_samples += y.shape[0]
        window_samples += y.shape[0]
        if (i + 1) % accum_steps == 0 or i + 1 == n_batches:
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.grad.div_(window_samples)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            window_samples = 0
    return total_loss / total_samples
