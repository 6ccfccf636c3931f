import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    """Leave in every parameter's .grad the full-batch gradient of loss_fn(model(X), Y),
    computed over micro-batches of at most micro_batch_size examples."""
    raise NotImplementedError


def unscaled_factor(n_examples, micro_batch_size):
    """How many times too large the gradient is when micro-batch means are summed unscaled."""
    raise NotImplementedError
