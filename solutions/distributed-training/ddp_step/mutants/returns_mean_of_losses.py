# misconception: unweighted_loss
"""Misconception: the global loss is the average of the ranks' mean losses,
whatever the shard sizes."""
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
    mean = torch.tensor([loss.item()], dtype=torch.float64)
    dist.all_reduce(mean)
    return mean.item() / world_size
