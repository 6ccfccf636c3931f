# misconception: dtype_change_view
"""Believes x.to(torch.float64) reinterprets the same memory (a view), as a cast in C might;
a new element type needs new bytes."""

_TABLE = view_or_copy()  # noqa: F821 - the reference's, defined in the cell above


def view_or_copy():
    return {**_TABLE, "to_float64": "view"}
