"""Per-micro-batch gradients with torch.autograd.grad, summed into buffers with weights
len(batch)/n, then written to .grad (replacing whatever was there)."""

import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    params = [p for p in model.parameters() if p.requires_grad]
    totals = [torch.zeros_like(p) for p in params]
    n = X.shape[0]
    batches = zip(torch.split(X, micro_batch_size), torch.split(Y, micro_batch_size), strict=True)
    for xb, yb in batches:
        grads = torch.autograd.grad(loss_fn(model(xb), yb), params)
        for t, g in zip(totals, grads, strict=True):
            t.add_(g, alpha=xb.shape[0] / n)
    for p, t in zip(params, totals, strict=True):
        p.grad = t


def unscaled_factor(n_examples, micro_batch_size):
    return float(len(range(0, n_examples, micro_batch_size)))
