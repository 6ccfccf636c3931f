# misconception: detach_copies
"""Believes detach() copies the data to cut it from the graph (it returns a new tensor over
the same memory)."""

_TABLE = view_or_copy()  # noqa: F821 - the reference's, defined in the cell above


def view_or_copy():
    return {**_TABLE, "detach": "copy"}
