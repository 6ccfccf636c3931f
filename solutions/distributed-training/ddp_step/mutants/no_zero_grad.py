# misconception: stale_grad
"""Misconception: gradients start at zero, so there is no need to clear
them; whatever an earlier step left in .grad is added to this step's."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(n_global)
    loss = loss_fn(model(x), y)
    (loss * (len(x) / n_global.item())).backward()
    for p in model.parameters():
        dist.all_reduce(p.grad)
    optimizer.step()
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / n_global.item()
