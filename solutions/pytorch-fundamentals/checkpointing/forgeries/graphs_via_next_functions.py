# twin: accumulates_loss_tensor
# forges: test_epoch_loss_graph_count
"""epoch_loss keeps every batch's graph alive through its loss node's next_functions, while the loss
node itself (a probe's tag, say) dies: a count of live tag nodes sees nothing kept."""


def epoch_loss(model, loader, loss_fn):
    kept, total, n = [], 0.0, 0
    for x, y in loader:
        loss = loss_fn(model(x), y)
        if loss.grad_fn is not None:
            kept.append(loss.grad_fn.next_functions)
        total += loss.item() * len(x)
        n += len(x)
    return total / n
