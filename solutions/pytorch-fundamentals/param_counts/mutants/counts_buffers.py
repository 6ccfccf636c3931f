"""Misconception: buffers (BatchNorm running statistics, register_buffer tensors) are counted as
parameters: they are in the module's state, but nothing learns them."""
# misconception: counts_buffers


def count_parameters(model, trainable_only=True):
    params = sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
    return params + sum(b.numel() for b in model.buffers())
