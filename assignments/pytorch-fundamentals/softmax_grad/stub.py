import torch
import torch.nn.functional as F


def softmax_ce_grad(logits, target):
    """Gradient of F.cross_entropy(logits, target) (mean) w.r.t. logits, without autograd."""
    raise NotImplementedError
