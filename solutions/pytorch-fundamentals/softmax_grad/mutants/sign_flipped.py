# misconception: none
"""Sign error: returns onehot - softmax (the gradient of the log-likelihood, not of the
loss)."""
import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    probs = torch.softmax(logits, dim=-1)
    onehot = F.one_hot(target, logits.shape[-1]).to(logits.dtype)
    n = logits.shape[0] if logits.dim() == 2 else 1
    return (onehot - probs) / n
