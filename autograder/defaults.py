"""Each setting's default is written once, by what owns it; everything else reads it from there.

The owner is a settings dataclass (``Budget.cell_seconds``) or a function's
keyword (``scaffold(points=...)``). A command-line option takes its default
from the owner (as Otter-Grader's CLI reads ``grade.__kwdefaults__``) through
:func:`add_option`, which also makes ``--help`` show it, and records the
owner on the option so that ``tests/test_cli.py`` can hold the two together.

Imports nothing of the project's: every layer may use it.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
from collections.abc import Callable
from typing import Any


def default_of(owner: Any, name: str) -> Any:
    """The default ``owner`` (a dataclass, or a function) writes for its field or parameter ``name``."""
    label = getattr(owner, "__name__", repr(owner))
    if dataclasses.is_dataclass(owner):
        for f in dataclasses.fields(owner):
            if f.name == name:
                if f.default is not dataclasses.MISSING:
                    return f.default
                if f.default_factory is not dataclasses.MISSING:
                    return f.default_factory()
                raise KeyError(f"{label}.{name} has no default")
        raise KeyError(f"{label} has no field {name!r}")
    default = inspect.signature(owner).parameters[name].default
    if default is inspect.Parameter.empty:
        raise KeyError(f"{label}() has no default for {name!r}")
    return default


@dataclasses.dataclass(frozen=True)
class Owner:
    """Where an option's default is written, and how the owner's value reads on the command line."""

    owner: Any  # a dataclass or a function
    name: str  # its field or parameter
    convert: Callable[[Any], Any] | None = None  # the owner's unit to the option's (bytes to GiB)

    def value(self) -> Any:
        v = default_of(self.owner, self.name)
        return self.convert(v) if self.convert else v


def add_option(parser: Any, *flags: str, help: str, owner: Owner | None = None,  # noqa: A002 - argparse's name
               default: Any = None, **kw: Any) -> argparse.Action:
    """``parser.add_argument`` with a default that ``--help`` shows: ``owner``'s, or the command's own ``default``.

    An empty default (None, "") is not shown: the help says what its absence means.

    The action keeps ``owner`` (``action.owner``; None where the command's own
    default is the only one), so a test can check every option against it.
    """
    if owner is not None:
        default = owner.value()
    if default not in (None, "") and "%(default)" not in help:
        help = f"{help} (default: %(default)s)"
    action: argparse.Action = parser.add_argument(*flags, default=default, help=help, **kw)
    action.owner = owner  # type: ignore[attr-defined]
    return action
