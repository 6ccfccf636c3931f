"""Correct: flat checkpoint with python `random` and NumPy states too (as
weights_only-safe lists), loading on CPU via map_location; epoch_loss in
inference_mode with a float64 tensor accumulator of detached sums."""
import random

import numpy as np
import torch


def save_checkpoint(path, model, optimizer, scheduler, epoch):
    np_state = np.random.get_state()
    state = {
        "model_state": model.state_dict(),
        "optim_state": optimizer.state_dict(),
        "sched_state": scheduler.state_dict(),
        "epoch": epoch,
        "rng_torch": torch.random.get_rng_state(),
        "rng_python": random.getstate(),
        "rng_numpy": [np_state[0], torch.from_numpy(np_state[1].astype(np.int64)),
                      int(np_state[2]), int(np_state[3]), float(np_state[4])],
    }
    torch.save(state, path)


def load_checkpoint(path, model, optimizer, scheduler):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model_state"])
    optimizer.load_state_dict(state["optim_state"])
    scheduler.load_state_dict(state["sched_state"])
    torch.random.set_rng_state(state["rng_torch"])
    random.setstate(state["rng_python"])
    name, keys, pos, has_gauss, cached = state["rng_numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    return int(state["epoch"])


def epoch_loss(model, loader, loss_fn):
    acc = torch.zeros((), dtype=torch.float64)
    seen = 0
    with torch.inference_mode():
        for x, y in loader:
            acc += loss_fn(model(x), y).double() * x.shape[0]
            seen += x.shape[0]
    return float(acc / seen)
