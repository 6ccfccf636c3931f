# misconception: none
"""Calls autograd on the inputs instead of deriving the gradient: fails when gradient
recording is off (torch.no_grad) as the contract requires."""
import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    z = logits.detach().requires_grad_(True)
    loss = F.cross_entropy(z, target)
    (g,) = torch.autograd.grad(loss, z)
    return g
