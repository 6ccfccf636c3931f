"""The request loop that runs *inside* the sandbox, next to the student's code.

Nothing here is trusted by the judge: the student's cells run in this very
process and may tamper with it. The loop only has to be useful to honest
code; the judge treats every reply as untrusted data (it checks ids, decodes
with the safe wire format, and computes every verdict itself).
"""

from __future__ import annotations

import builtins
import importlib
import linecache
import random
import socket
import sys
import types
from typing import Any

import numpy as np
import torch

from autograder.sandbox import wire

MAX_MESSAGE = 2000
CELL_PREFIX = "<cell "


class MissingName(AttributeError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class StudentView:
    """The student's namespace as probes see it: a missing name is reported as such."""

    def __init__(self, module: types.ModuleType) -> None:
        object.__setattr__(self, "_module", module)

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(object.__getattribute__(self, "_module"), name)
        except AttributeError:
            raise MissingName(name) from None

    def has(self, name: str) -> bool:
        return hasattr(object.__getattribute__(self, "_module"), name)


class _NullIPython:
    """Stands in for ``get_ipython()`` so notebook code that pokes it does nothing."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def _display(*objs: Any, **kwargs: Any) -> None:
    for o in objs:
        print(repr(o))


def _truncate(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 20] + " ... [truncated]"


def _safe_str(exc: BaseException) -> str:
    try:
        return _truncate(str(exc), MAX_MESSAGE)
    except BaseException:  # a student exception whose __str__ itself fails
        return "<the exception's message could not be shown>"


def _cell_of(filename: str) -> int | None:
    if filename.startswith(CELL_PREFIX) and filename.endswith(">"):
        try:
            return int(filename[len(CELL_PREFIX) : -1])
        except ValueError:
            return None
    return None


def describe_exception(exc: BaseException) -> dict[str, Any]:
    """A student exception as plain data, its traceback trimmed to the student's cells.

    ``frames`` lists [cell, line, function, code] for the student's own frames
    only: the judge formats them, and library internals never reach a student.
    """
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        cell = _cell_of(code.co_filename)
        if cell is not None:
            line = linecache.getline(code.co_filename, tb.tb_lineno)
            name = getattr(code, "co_qualname", code.co_name)
            frames.append([cell, tb.tb_lineno, name, _truncate(line.strip(), 200)])
        tb = tb.tb_next
    message = _safe_str(exc)
    kind = "exception"
    if isinstance(exc, MissingName):
        kind, message = "missing_name", exc.name
    elif isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    elif isinstance(exc, MemoryError) or (
        isinstance(exc, RuntimeError) and ("can't allocate memory" in message or "DefaultCPUAllocator" in message)
    ):
        kind = "memory"
    elif isinstance(exc, wire.Unencodable):
        kind = "encoding"
    if isinstance(exc, SyntaxError) and _cell_of(exc.filename or "") is not None:
        frames = [[_cell_of(exc.filename), exc.lineno, "<module>", _truncate((exc.text or "").strip(), 200)]]
        message = exc.msg
    return {"kind": kind, "type": type(exc).__name__, "message": message, "frames": frames[-8:]}


class Runtime:
    def __init__(self, sock: socket.socket) -> None:
        import autograder

        autograder.IN_SANDBOX = True  # `autograder.check(...)` in a graded notebook is then a no-op
        self.sock = sock
        self.module = types.ModuleType("__main__")
        self.module.__dict__.update(
            {"__builtins__": builtins, "display": _display, "get_ipython": lambda: _NullIPython()}
        )
        sys.modules["__main__"] = self.module
        self.view = StudentView(self.module)
        self.handles: dict[int, Any] = {}
        self.probes: dict[str, dict[str, Any]] = {}

    # ------------------------------------------------------------------ encoding
    def _handle(self, obj: Any) -> dict:
        if isinstance(obj, torch.Tensor):
            raise wire.Unencodable(
                f"got a {type(obj).__name__}, a subclass of torch.Tensor; return a plain torch.Tensor"
            )
        hid = len(self.handles) + 1
        self.handles[hid] = obj
        cls = type(obj)
        mro = [f"{c.__module__}.{c.__qualname__}" for c in getattr(cls, "__mro__", ())]
        return {"$": "handle", "id": hid, "type": cls.__qualname__, "mro": mro, "callable": callable(obj)}

    def _resolve(self, node: dict) -> Any:
        hid = node.get("id")
        if hid not in self.handles:
            raise wire.WireError("unknown handle")
        return self.handles[hid]

    def reply(self, rid: Any, payload: Any = None, **fields: Any) -> None:
        try:
            data = wire.pack({"id": rid, "ok": True, **fields}, payload, fallback=self._handle)
        except BaseException as e:  # noqa: BLE001 - any failure to encode is the student's value
            data = wire.pack({"id": rid, "ok": False, "error": describe_exception(e)})
        wire.send_frame(self.sock, data)

    def fail(self, rid: Any, exc: BaseException) -> None:
        wire.send_frame(self.sock, wire.pack({"id": rid, "ok": False, "error": describe_exception(exc)}))

    # ------------------------------------------------------------------ operations
    def target(self, req: dict) -> Any:
        t = req.get("target")
        return self.view if t is None else self._resolve({"id": t})

    def op_exec(self, req: dict, payload: Any) -> Any:
        cell, source = req["cell"], payload
        filename = f"{CELL_PREFIX}{cell}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        code = compile(source, filename, "exec", dont_inherit=True)
        exec(code, self.module.__dict__)
        return None

    def op_getattr(self, req: dict, payload: Any) -> Any:
        return getattr(self.target(req), req["name"])

    def op_call(self, req: dict, payload: Any) -> Any:
        fn = self.target(req)
        if req.get("name"):
            fn = getattr(fn, req["name"])
        args, kwargs = payload
        value = fn(*args, **kwargs)
        if req.get("detailed"):
            return {"value": value, "args": list(args), "kwargs": kwargs}
        return value

    def op_getitem(self, req: dict, payload: Any) -> Any:
        return self.target(req)[payload]

    def op_len(self, req: dict, payload: Any) -> Any:
        return len(self.target(req))

    def op_iter(self, req: dict, payload: Any) -> Any:
        return _Iter(iter(self.target(req)))

    def op_next(self, req: dict, payload: Any) -> Any:
        it = self.target(req)
        try:
            return {"done": False, "value": next(it.it)}
        except StopIteration:
            return {"done": True, "value": None}

    def op_load_probes(self, req: dict, payload: Any) -> Any:
        name = f"probes_{req['exercise']}"
        mod = types.ModuleType(name)
        code = compile(payload, f"<probes {req['exercise']}>", "exec", dont_inherit=True)
        exec(code, mod.__dict__)
        self.probes[req["exercise"]] = mod.__dict__
        return None

    def op_probe(self, req: dict, payload: Any) -> Any:
        fn = self.probes[req["exercise"]][req["name"]]
        args, kwargs = payload
        return fn(self.view, *args, **kwargs)

    def op_seed(self, req: dict, payload: Any) -> Any:
        seed = int(req["seed"])
        torch.manual_seed(seed)
        np.random.seed(seed % 2**32)
        random.seed(seed)
        return None

    def op_ref(self, req: dict, payload: Any) -> Any:
        path = req["path"]
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for p in parts[i:]:
                obj = getattr(obj, p)
            return obj
        raise ImportError(f"cannot import {path}")

    def op_ping(self, req: dict, payload: Any) -> Any:
        return "pong"

    # ------------------------------------------------------------------ loop
    def serve(self) -> None:
        while True:
            try:
                frame = wire.recv_frame(self.sock)
            except (wire.Closed, OSError):
                return
            try:
                req, payload = wire.unpack(frame, resolve_handle=self._resolve)
            except wire.WireError as e:
                self.fail(None, e)
                continue
            rid = req.get("id")
            op = getattr(self, f"op_{req.get('op')}", None)
            if op is None:
                self.fail(rid, ValueError(f"unknown op {req.get('op')!r}"))
                continue
            try:
                value = op(req, payload)
            except SystemExit as e:
                self.fail(rid, RuntimeError(f"the code called sys.exit({e.code!r}); that is ignored when grading"))
                continue
            except BaseException as e:  # noqa: BLE001 - student code may raise anything
                self.fail(rid, e)
                continue
            finally:
                _flush()
            self.reply(rid, value)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - the student may have replaced the stream
            pass


class _Iter:
    """An iterator the judge steps through with ``next`` requests."""

    def __init__(self, it: Any) -> None:
        self.it = it
