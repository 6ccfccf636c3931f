"""Misconception: trainable_only defaults to False, so a plain count_parameters(model) counts frozen
parameters too."""
# misconception: default_counts_frozen


def count_parameters(model, trainable_only=False):
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
