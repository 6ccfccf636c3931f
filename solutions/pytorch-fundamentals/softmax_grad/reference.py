import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    if logits.dim() == 1:
        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
    n = logits.shape[0]
    grad = torch.softmax(logits, dim=1)  # stable: softmax subtracts the row max
    grad[torch.arange(n), target] -= 1
    return grad / n
