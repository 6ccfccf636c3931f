"""exp(z - logsumexp(z)) minus a one-hot matrix, divided by the number of examples; the 1-D
case handled by broadcasting over the last dimension."""

import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    probs = torch.exp(logits - torch.logsumexp(logits, dim=-1, keepdim=True))
    onehot = F.one_hot(target, num_classes=logits.shape[-1]).to(logits.dtype)
    n = logits.shape[0] if logits.dim() == 2 else 1
    return (probs - onehot) / n
