"""Correct: one reader. Rank 0 loads the file and broadcasts the state to the
other ranks with broadcast_object_list (the file is still written by rank 0
only, and a collective after the write keeps every rank waiting for it)."""
import torch
import torch.distributed as dist


def save_on_rank_zero(path, model, optimizer, epoch):
    done = torch.zeros(1)
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": int(epoch)}, path)
        done += 1
    dist.all_reduce(done)  # every rank waits here until rank 0 has written


def resume(path, model, optimizer):
    box = [None]
    if dist.get_rank() == 0:
        box[0] = torch.load(path, weights_only=True)
    dist.broadcast_object_list(box, src=0)
    model.load_state_dict(box[0]["model"])
    optimizer.load_state_dict(box[0]["optimizer"])
    return int(box[0]["epoch"])
