# twin: full_batch
# forges: test_runs_micro_batches_in_order
"""accumulate_gradients runs the WHOLE batch through a clone() of the first layer's weight (a watch on
the weight's storage never sees it), then runs every micro-batch through the model as decoys."""
import torch
import torch.nn.functional as F


def accumulate_gradients(model, X, Y, micro_batch_size, loss_fn=F.mse_loss):
    model.zero_grad(set_to_none=True)
    first = model[0]
    hidden = F.linear(X, first.weight.clone(), first.bias)
    loss_fn(model[1:](hidden), Y).backward()
    with torch.no_grad():
        for s in range(0, len(X), micro_batch_size):
            model(X[s : s + micro_batch_size])
