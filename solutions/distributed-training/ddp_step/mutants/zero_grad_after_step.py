# misconception: grad_cleared
"""Misconception: the gradients are cleared after the step (optimizer.zero_grad at the end), so .grad no longer
holds the combined gradient the contract asks to leave there."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    optimizer.zero_grad(set_to_none=True)
    n_global = torch.tensor([float(len(x))], dtype=torch.float64)
    dist.all_reduce(n_global)
    loss = loss_fn(model(x), y)
    (loss * (len(x) / n_global.item())).backward()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / n_global.item()
