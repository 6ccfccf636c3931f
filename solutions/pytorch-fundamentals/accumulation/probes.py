import torch
import torch.nn as nn
import torch.nn.functional as F

LOSSES = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy, "l1": F.l1_loss}


def _build(sizes):
    d_in, hidden, d_out = sizes
    return nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()


def run_accumulation(mod, sizes, state, X, Y, micro_batch_size, loss_name, prefill):
    model = _build(sizes)
    model.load_state_dict(state)
    if prefill is not None:
        for p in model.parameters():
            p.grad = torch.full_like(p, float(prefill))
    seen = []

    def record(module, args):
        seen.append(args[0].detach().clone())

    handles = [model[0].register_forward_pre_hook(record)]
    try:
        if loss_name is None:
            returned = mod.accumulate_gradients(model, X, Y, micro_batch_size)
        else:
            returned = mod.accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=LOSSES[loss_name])
    finally:
        for h in handles:
            h.remove()
    return {
        "grads": {name: (None if p.grad is None else p.grad.detach().clone()) for name, p in model.named_parameters()},
        "forward_inputs": seen,
        "returned": None if returned is None else type(returned).__name__,
        "X": X,
        "Y": Y,
    }


def run_many(mod, runs):
    return [run_accumulation(mod, *run) for run in runs]
