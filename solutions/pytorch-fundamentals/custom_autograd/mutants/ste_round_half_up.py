"""Misconception: rounding as floor(x + 0.5), which sends every tie up (0.5 -> 1, -2.5 -> -2)
instead of to the even neighbour as torch.round does (0.5 -> 0, 1.5 -> 2, -2.5 -> -2)."""
# misconception: round_half_up
import torch


class StraightThroughRound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return torch.floor(x + 0.5)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output
