import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    n = len(X)
    for start in range(0, n, micro_batch_size):
        xb = X[start : start + micro_batch_size]
        yb = Y[start : start + micro_batch_size]
        # The mean over all of X weights each micro-batch mean by its share of the examples.
        loss = loss_fn(model(xb), yb) * (len(xb) / n)
        loss.backward()


def unscaled_factor(n_examples, micro_batch_size):
    return n_examples / micro_batch_size
