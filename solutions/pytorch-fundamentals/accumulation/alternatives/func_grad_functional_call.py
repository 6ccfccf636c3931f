"""torch.func: the gradient of each micro-batch's loss with respect to a dict of parameters
through functional_call, weighted by the micro-batch's share and summed, then written to
.grad."""

# torchgrader: whole-file
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    params = {k: p.detach() for k, p in model.named_parameters()}
    buffers = dict(model.named_buffers())

    def loss_of(p, xb, yb):
        return loss_fn(functional_call(model, (p, buffers), (xb,)), yb)

    total = {k: torch.zeros_like(v) for k, v in params.items()}
    n = X.shape[0]
    for start in range(0, n, micro_batch_size):
        xb, yb = X[start : start + micro_batch_size], Y[start : start + micro_batch_size]
        g = grad(loss_of)(params, xb, yb)
        for k in total:
            total[k] += g[k] * (xb.shape[0] / n)
    for k, p in model.named_parameters():
        p.grad = total[k]


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
