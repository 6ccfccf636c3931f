import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    """Weight each shard's mean loss by its share of the global batch, then sum gradients."""
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
    total = torch.tensor([loss.item() * len(x)], dtype=torch.float64)
    dist.all_reduce(total)
    return total.item() / n_global.item()
