"""Trusted sandbox-side harness for `accumulation` (no expected answers here)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

LOSSES = {"mse": F.mse_loss, "cross_entropy": F.cross_entropy, "l1": F.l1_loss}


def _build(sizes):
    d_in, hidden, d_out = sizes
    return nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()


def run_accumulation(mod, sizes, state, X, Y, micro_batch_size, loss_name, prefill):
    """Build the model from `state`, optionally put stale values in .grad, record every
    forward's input, call the student's accumulate_gradients, and report what happened."""
    model = _build(sizes)
    model.load_state_dict(state)
    if prefill is not None:
        for p in model.parameters():
            p.grad = torch.full_like(p, float(prefill))
    seen = []
    inner_forward = model.forward

    def recording_forward(x, *args, **kwargs):
        seen.append(x.detach().clone())
        return inner_forward(x, *args, **kwargs)

    model.forward = recording_forward
    X_sent, Y_sent = X.clone(), Y.clone()
    if loss_name is None:
        returned = mod.accumulate_gradients(model, X, Y, micro_batch_size)
    else:
        returned = mod.accumulate_gradients(model, X, Y, micro_batch_size,
                                            loss_fn=LOSSES[loss_name])
    return {
        "grads": {name: (None if p.grad is None else p.grad.detach().clone())
                  for name, p in model.named_parameters()},
        "forward_inputs": seen,
        "returned": None if returned is None else type(returned).__name__,
        "X_unchanged": bool(torch.equal(X, X_sent)),
        "Y_unchanged": bool(torch.equal(Y, Y_sent)),
    }
