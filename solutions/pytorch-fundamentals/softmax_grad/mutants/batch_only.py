# misconception: none
"""Only handles the batched (n, C) form: for unbatched (C,) logits with a 0-d target it
treats the C logits as a batch of C examples."""
import torch


def softmax_ce_grad(logits, target):
    n = logits.shape[0]
    grad = torch.softmax(logits, dim=-1)
    grad[torch.arange(n), target] -= 1
    return grad / n
