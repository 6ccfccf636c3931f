import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
    dist.barrier()  # every rank waits until the file is complete


def resume(path, model, optimizer):
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    return int(ckpt["epoch"])
