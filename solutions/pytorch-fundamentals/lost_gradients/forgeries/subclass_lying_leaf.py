# twin: leaf_then_to
# forges: test_make_leaf_is_a_leaf
"""make_leaf returns a retained NON-leaf as a Tensor subclass whose is_leaf and grad_fn say "leaf"."""
import torch


class _Leafy(torch.Tensor):
    @property
    def is_leaf(self):
        return True

    @property
    def grad_fn(self):
        return None


def make_leaf(shape, device="cpu", dtype=torch.float32):
    t = (torch.randn(shape, device=device, dtype=dtype, requires_grad=True) * 1).as_subclass(_Leafy)
    t.retain_grad()
    return t
