# misconception: destroys_group
"""Misconception: a function that used the process group should clean it up
with destroy_process_group; the group belongs to the caller."""
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
        dist.all_reduce(p.grad)
    optimizer.step()
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    dist.destroy_process_group()
    return total.item() / n_global.item()
