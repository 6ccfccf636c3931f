"""Correct: serialise to memory first, write the bytes in one go on rank 0;
a flat dict with prefixed keys."""
import io

import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    rank = dist.get_rank()
    if rank == 0:
        flat = {f"model/{k}": v for k, v in model.state_dict().items()}
        flat["optim"] = optimizer.state_dict()
        flat["epoch"] = torch.tensor(epoch)
        buf = io.BytesIO()
        torch.save(flat, buf)
        with open(path, "wb") as f:
            f.write(buf.getvalue())
    dist.barrier()


def resume(path, model, optimizer):
    flat = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict({k[len("model/"):]: v for k, v in flat.items() if k.startswith("model/")})
    optimizer.load_state_dict(flat["optim"])
    return int(flat["epoch"].item())
