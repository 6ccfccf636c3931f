# misconception: view_on_noncontiguous
"""Uses x.view(-1), which raises on a non-contiguous tensor such as x.T."""


def flatten_any(x):
    return x.view(-1)
