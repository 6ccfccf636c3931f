# twin: cube_plain_autograd
# forges: test_cube_is_a_custom_function
"""Cube is a torch.autograd.Function in name only: its backward asks torch.autograd.grad for the derivative of
x ** 3, so the class check and the CubeBackward graph node both say "custom Function" while autograd does
the differentiating, as in the honest twin."""
import torch


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            leaf = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(leaf ** 3, leaf, grad_output)
        return g
