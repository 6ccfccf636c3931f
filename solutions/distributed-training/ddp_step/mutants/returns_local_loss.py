# misconception: local_loss
"""Misconception: the step is right, but each rank returns the loss of its
own shard instead of the global mean loss."""
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
    return loss.item()
