# misconception: reshape_always_views
"""Believes reshape always returns a view (like view does when it can), so x.T.reshape(-1)
would share x's storage."""

_TABLE = view_or_copy()  # noqa: F821 - the reference's, defined in the cell above


def view_or_copy():
    return {**_TABLE, "reshape_transposed": "view"}
