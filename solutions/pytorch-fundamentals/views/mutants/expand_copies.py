# misconception: expand_copies
"""Believes expand materialises the repeated rows in new memory (it only sets a stride of 0)."""

_TABLE = view_or_copy()  # noqa: F821 - the reference's, defined in the cell above


def view_or_copy():
    return {**_TABLE, "expand": "copy"}
