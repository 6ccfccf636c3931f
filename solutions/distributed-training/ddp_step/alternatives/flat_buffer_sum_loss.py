"""Correct: backpropagate the shard's summed loss, flatten every gradient into
one buffer, all-reduce it once (with the loss sum and the count riding
along), and divide by the global number of examples."""
import torch
import torch.distributed as dist


def ddp_step(rank, world_size, model, batch, optimizer, loss_fn):
    x, y = batch
    params = list(model.parameters())
    for p in params:
        p.grad = None
    loss = loss_fn(model(x), y)
    (loss * len(x)).backward()
    flat = torch.cat([p.grad.reshape(-1) for p in params]
                     + [torch.tensor([loss.item() * len(x), float(len(x))], dtype=params[0].dtype)])
    dist.all_reduce(flat, op=dist.ReduceOp.SUM)
    n_global = flat[-1].item()
    offset = 0
    for p in params:
        k = p.numel()
        p.grad.copy_(flat[offset:offset + k].view_as(p) / n_global)
        offset += k
    optimizer.step()
    return flat[-2].item() / n_global
