"""A per-example gradient (softmax via log_softmax, minus a one-hot built with arange ==
target) mapped over the batch with torch.func.vmap, then averaged."""

# torchgrader: whole-file
import torch


def _one(z, t):
    p = torch.exp(torch.log_softmax(z, dim=0))
    onehot = (torch.arange(z.shape[0]) == t).to(z.dtype)
    return p - onehot


def softmax_ce_grad(logits, target):
    if logits.dim() == 1:
        return _one(logits, target)
    per_example = torch.func.vmap(_one)(logits, target)
    return per_example / logits.shape[0]
