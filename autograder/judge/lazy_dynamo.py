"""A grading worker's judge imports torch._dynamo only when it compiles, not because an optimizer steps.

torch.optim touches torch._dynamo on every step, outside any compile:
``Optimizer.step`` runs ``torch._dynamo.graph_break()`` (a function whose body is
empty) and ``zero_grad``, ``state_dict`` and the like are wrapped by
``torch._disable_dynamo``, which asks ``torch._dynamo.disable(fn)`` for a wrapper on
their first call. Importing torch._dynamo for that costs a judge as much as a
second import of torch (2.2 s against 3.7 s on the 2-core VM), on the critical
path of a cold submission: the judge is the last to be ready.

:func:`install` puts a stand-in under ``sys.modules["torch._dynamo"]`` that
answers exactly those two calls the way torch._dynamo does when nothing is being
compiled, and imports the real module on any other attribute (after which every
name, including these two, is the real module's). The judge never compiles
(compiles run in sandboxes), so nothing it computes depends on the stand-in;
``tests/judge/test_lazy_dynamo.py`` holds both halves to that.

Only a grading worker installs it (``batch/backends/worker.py``: the batch, the
CLI's ``grade``, the service, containers and the cluster all grade there): a
sandbox and the floor run student code, which may compile, and ``check()``
grades inside the student's own kernel.

A submodule import (``import torch._dynamo.config``) while the stand-in is in
place asks it for ``__path__``, which imports the real package, and the import
system would then load that submodule a second time; :class:`_AlreadyLoaded`
hands it the module the real import loaded instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable
from typing import Any

NAME = "torch._dynamo"


class _StandIn(types.ModuleType):
    """torch._dynamo for a process that does not compile, until something asks for more."""

    def __init__(self, file: str) -> None:
        super().__init__(NAME, __doc__)
        # inspect.getmodule reads every module's __file__: it must not import the real one for that
        self.__file__ = file

    @staticmethod
    def graph_break(msg: str = "") -> None:
        """torch._dynamo.graph_break outside a compile: nothing (its body is empty)."""
        real = _loaded()
        if real is not None:
            real.graph_break(msg)

    @staticmethod
    def disable(fn: Callable[..., Any] | None = None, recursive: bool = True, **kwargs: Any) -> Any:
        """torch._dynamo.disable: ``fn`` run with dynamo off, which is ``fn`` itself while nothing compiles.

        The wrapper is cached by torch (``fn.__dynamo_disable``), so it asks again at each call whether
        the real module has been imported since, and defers to it then.
        """
        if fn is None:
            return lambda f: _StandIn.disable(f, recursive, **kwargs)

        def call(*args: Any, **kw: Any) -> Any:
            real = _loaded()
            if real is not None:
                return real.disable(fn, recursive, **kwargs)(*args, **kw)
            return fn(*args, **kw)

        return call

    def __getattr__(self, name: str) -> Any:
        return getattr(_real(), name)


def _loaded() -> types.ModuleType | None:
    """The real torch._dynamo if something imported it since :func:`install`, else None."""
    mod = sys.modules.get(NAME)
    return mod if mod is not None and not isinstance(mod, _StandIn) else None


def _real() -> types.ModuleType:
    """Import the real torch._dynamo in the stand-in's place (once) and return it."""
    real = _loaded()
    if real is None:
        if isinstance(sys.modules.get(NAME), _StandIn):
            del sys.modules[NAME]
        real = importlib.import_module(NAME)
    return real


class _Existing(importlib.abc.Loader):
    """Loads a module that is loaded already: itself, with its own spec kept."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            module.__spec__ = self.spec  # the import system set it to the spec below
        except AttributeError:  # a module that refuses new attributes (torch's config modules) kept its own
            pass


class _AlreadyLoaded(importlib.abc.MetaPathFinder):
    """A torch._dynamo submodule asked for while the real package was being imported in the stand-in's place.

    The import system looks for a submodule only when it is not in ``sys.modules``; it finds one there only
    when the parent's ``__path__`` (the stand-in's, see the module's docstring) imported the real package,
    which loaded that submodule itself.
    """

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        module = sys.modules.get(name) if name.startswith(NAME + ".") else None
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(name, _Existing(module), is_package=hasattr(module, "__path__"))


def install() -> bool:
    """Put the stand-in in place unless torch._dynamo is imported already; True when it was put."""
    if NAME in sys.modules:
        return False
    import torch

    if "_dynamo" in vars(torch):
        return False
    if not any(isinstance(f, _AlreadyLoaded) for f in sys.meta_path):
        sys.meta_path.insert(0, _AlreadyLoaded())
    sys.modules[NAME] = _StandIn(os.path.join(os.path.dirname(torch.__file__), "_dynamo", "__init__.py"))
    return True
