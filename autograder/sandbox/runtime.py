"""The request loop that runs *inside* the sandbox, next to the student's code.

Nothing here is trusted by the judge: the student's cells run in this very
process and may tamper with it. The loop only has to be useful to honest
code; the judge treats every reply as untrusted data (it checks ids, decodes
with the safe wire format, and computes every verdict itself).

Tampering is still made hard, because a forged reply is worse than a failed
one: before the first student cell runs, the runtime binds its dispatch table
and its encoder into the serving loop's own locals (no handler is looked up by
name afterwards), loads every probe module and keeps a snapshot of its
functions (restored before each probe call), and removes the grader's modules
from ``sys.modules``. ``import autograder`` then gives a stub whose ``check``
is a no-op (check cells of a graded notebook keep running), and
``autograder.*`` submodules cannot be imported. Reaching the runtime by other
means (the garbage collector, frames) remains possible in-process; the judge
flags such code (``autograder/judge/tamper.py``) and never awards points on a
fact the sandbox merely asserts when it can observe the effect itself.
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

from autograder.errors import MissingName
from autograder.sandbox import conventions as _conventions
from autograder.sandbox import ranks as _ranks
from autograder.sandbox import seeding as _seeding
from autograder.sandbox import wire
from autograder.sandbox.describe import CELL_PREFIX, describe_exception, grader_fault

# Grader modules that probes may import while they load (before the first student cell).
# Everything else of the grader is hidden from the sandbox; these are lent to probe
# loading only, and what a probe imports from them it keeps in its own module.
PROBE_LIBRARY = {"autograder.sandbox.ranks": _ranks, "autograder.sandbox.conventions": _conventions}

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


# Functions handed to student code are compiled in a namespace of their own, so their
# ``__globals__`` lead nowhere near the runtime, the wire encoder or the probes.
_STUDENT_HELPERS = """
def display(*objs, **kwargs):
    for o in objs:
        print(repr(o))

class _NullIPython:
    def __getattr__(self, name):
        return lambda *a, **k: None

def get_ipython():
    return _NullIPython()

def check(exercise=None, **kwargs):
    print(f"check({exercise!r}) skipped: this code is being graded, which runs its own tests.")

def submit(*args, **kwargs):
    print("submit() skipped: this code is being graded.")
"""


def _student_helpers() -> dict[str, Any]:
    ns: dict[str, Any] = {"__builtins__": builtins, "__name__": "autograder"}
    exec(compile(_STUDENT_HELPERS, "<autograder>", "exec"), ns)  # noqa: S102 - our own constant source
    return ns


class _GraderImportBlocker:
    """A meta path finder that refuses the grader's modules to graded code."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> None:
        if name.startswith("autograder."):
            raise ModuleNotFoundError(
                f"No module named {name!r}: the grader's modules are not available to graded code", name=name
            )
        return None


_GRADER_MODULES: tuple[tuple[int, str], list[str]] | None = None


def grader_modules() -> list[str]:
    """The names of the grader's modules in ``sys.modules``: listed in the server, reused in each sandbox.

    Walking ``sys.modules`` (some 2,000 names once torch is imported) in a freshly forked sandbox writes
    every name's reference count, which copies the page each one lives on: about 5 ms of every sandbox's
    start. The server lists them before it forks; a sandbox walks again when ``sys.modules`` has another
    count or another name added last (a dict keeps its order) than when the list was made.
    """
    global _GRADER_MODULES
    key = (len(sys.modules), next(reversed(sys.modules)))
    if _GRADER_MODULES is None or _GRADER_MODULES[0] != key:
        _GRADER_MODULES = (key, [n for n in sys.modules if n == "autograder" or n.startswith("autograder.")])
    return _GRADER_MODULES[1]


def _hide_grader(helpers: dict[str, Any]) -> None:
    """``import autograder`` gives a stub with no-op ``check`` and ``submit``; nothing else is importable."""
    for name in grader_modules():
        sys.modules.pop(name, None)
    stub = types.ModuleType("autograder", "torchgrader (grading in progress: check() does nothing here)")
    vars(stub).update(check=helpers["check"], submit=helpers["submit"], IN_SANDBOX=True)
    stub.__path__ = []  # a package, so `import autograder.x` asks the finders (and is refused)
    sys.modules["autograder"] = stub
    sys.meta_path.insert(0, _GraderImportBlocker())


class Runtime:
    """Serves one judge. Everything it relies on is bound in ``__init__``, before student code."""

    OPS = ("exec", "getattr", "call", "getitem", "len", "iter", "next", "load_probes", "probe", "seed", "ref", "ping")

    def __init__(self, sock: socket.socket) -> None:
        helpers = _student_helpers()
        self.sock = sock
        self.module = types.ModuleType("__main__")
        self.module.__dict__.update(
            {"__builtins__": builtins, "display": helpers["display"], "get_ipython": helpers["get_ipython"]}
        )
        sys.modules["__main__"] = self.module
        self.view = StudentView(self.module)
        self.handles: dict[int, Any] = {}
        # exercise -> {function name: function}, snapshotted when the probes load
        self.probes: dict[str, dict[str, Any]] = {}
        self._probe_state: dict[str, tuple[dict, dict, list]] = {}
        self.sealed = False  # set by the first student cell: no probe loads after it
        # The dispatch table and the encoder, bound now: rebinding Runtime.op_probe,
        # wire.pack or wire.tensor_meta later changes nothing in the serving loop.
        self._ops = {name: getattr(self, f"op_{name}") for name in self.OPS}
        self._library = dict(PROBE_LIBRARY)
        self._pack = wire.pack
        self._send = wire.send_frame
        self._recv = wire.recv_frame
        self._unpack = wire.unpack
        _hide_grader(helpers)

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
            data = self._pack({"id": rid, "ok": True, **fields}, payload, fallback=self._handle)
        except BaseException as e:  # noqa: BLE001 - any failure to encode is the student's value
            data = self._pack({"id": rid, "ok": False, "error": describe_exception(e)})
        self._send(self.sock, data)

    def fail(self, rid: Any, exc: BaseException, origin: str = "student") -> None:
        self._send(self.sock, self._pack({"id": rid, "ok": False, "error": describe_exception(exc, origin)}))

    # ------------------------------------------------------------------ operations
    def target(self, req: dict) -> Any:
        t = req.get("target")
        return self.view if t is None else self._resolve({"id": t})

    def op_exec(self, req: dict, payload: Any) -> Any:
        self.sealed = True
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
        """Load one exercise's probes as a real module ``probes_<exercise>`` (before any student cell).

        The module is registered in ``sys.modules`` so that torch can import,
        trace, compile and pickle what it defines; the runtime keeps its own
        snapshot of the module's functions, taken now.
        """
        if self.sealed:
            raise _GraderFault(RuntimeError("probes arrived after the student's code had run"))
        exercise = str(req["exercise"])
        name = f"probes_{exercise}"
        mod = types.ModuleType(name)
        mod.__file__ = f"<probes {exercise}>"
        lent = [n for n in self._library if n not in sys.modules]
        try:
            code = compile(payload, mod.__file__, "exec", dont_inherit=True)
            sys.modules[name] = mod
            sys.modules.update({n: self._library[n] for n in lent})
            exec(code, mod.__dict__)
        except BaseException as e:  # noqa: BLE001 - a broken probe is the grader's fault
            sys.modules.pop(name, None)
            raise _GraderFault(e) from None
        finally:
            for n in lent:
                sys.modules.pop(n, None)
        self.probes[exercise] = {k: v for k, v in mod.__dict__.items() if callable(v) and not k.startswith("_")}
        self._probe_state[exercise] = (mod.__dict__, dict(mod.__dict__), _code_objects(mod))
        return None

    def _restore_probes(self, exercise: str) -> None:
        """Undo any rebinding of the probe module's names or its functions' code since it loaded.

        The module is importable (torch needs that), so student code can reach
        it; what the probe runs is always what the grader loaded.
        """
        live, names, codes = self._probe_state[exercise]
        live.update(names)
        for fn, code in codes:
            if fn.__code__ is not code:
                fn.__code__ = code

    def op_probe(self, req: dict, payload: Any) -> Any:
        fn = self.probes.get(req["exercise"], {}).get(req["name"])
        if fn is None:
            raise _GraderFault(LookupError(f"no probe {req['name']!r} for exercise {req['exercise']!r}"))
        self._restore_probes(req["exercise"])
        args, kwargs = payload
        try:
            return fn(self.view, *args, **kwargs)
        except MissingName:
            raise
        except BaseException as e:
            if grader_fault(e):
                raise _GraderFault(e) from None
            raise

    def op_seed(self, req: dict, payload: Any) -> Any:
        seed = int(req["seed"])
        _seeding.manual_seed(seed)
        np.random.seed(seed % 2**32)
        random.seed(seed)
        return None

    def op_ref(self, req: dict, payload: Any) -> Any:
        path = req["path"]
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            if prefix in self._library:  # a grader helper lent to suites; hidden from graded code
                obj = self._library[prefix]
            else:
                try:
                    obj = importlib.import_module(prefix)
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
        # Everything the loop touches is a local bound here, before any student cell ran.
        ops, recv, unpack, reply, fail, flush = (
            dict(self._ops),
            self._recv,
            self._unpack,
            self.reply,
            self.fail,
            _flush,
        )
        sock, resolve = self.sock, self._resolve
        seed = ops["seed"]
        modes = TorchModes()
        while True:
            try:
                frame = recv(sock)
            except (wire.PeerClosed, OSError):
                return
            try:
                req, payload = unpack(frame, resolve_handle=resolve)
            except wire.WireError as e:
                fail(None, e)
                continue
            rid = req.get("id")
            name = req.get("op")
            op = ops.get(name) if isinstance(name, str) else None
            if op is None:
                fail(rid, ValueError(f"unknown op {name!r}"), "grader")
                continue
            try:
                if req.get("seed_first") is not None:  # the test's seed, sent with its first request
                    modes.start_test()
                    seed({"seed": req["seed_first"]}, None)
                value = op(req, payload)
            except SystemExit as e:
                fail(rid, RuntimeError(f"the code called sys.exit({e.code!r}); that is ignored when grading"))
                continue
            except _GraderFault as e:
                fail(rid, e.error, "grader")
                continue
            except BaseException as e:  # noqa: BLE001 - student code may raise anything
                fail(rid, e)
                continue
            finally:
                flush()
            reply(rid, value)


def _code_objects(mod: types.ModuleType) -> list[tuple[types.FunctionType, types.CodeType]]:
    """(function, its code) for the module's functions and its classes' methods."""
    out = []
    for v in list(vars(mod).values()):
        members = [v] if isinstance(v, types.FunctionType) else []
        if isinstance(v, type) and v.__module__ == mod.__name__:
            for m in vars(v).values():
                m = getattr(m, "__func__", m)
                if isinstance(m, types.FunctionType):
                    members.append(m)
        out += [(f, f.__code__) for f in members if f.__module__ == mod.__name__]
    return out


class TorchModes:
    """torch's process-wide modes as the cells left them; every test starts from them.

    Without this, a function that leaves gradient recording off (the lost-gradients misconception), or
    changes the default dtype, failed every later test of the sandbox: a broken part cost the rest of the
    notebook, and how much of it depended on which exercises shared the sandbox (judge/spread.py). They
    are read at the first test's first request, when every cell has run (cells set them on purpose, and
    run again in every new sandbox); each later test's first request puts them back. A test's own calls
    still see what the earlier calls of the same test left.
    """

    def __init__(self) -> None:
        self._saved: tuple[Any, ...] | None = None
        t = torch  # bound now, before student code can rebind the module's names
        self._get = (t.is_grad_enabled, t.get_default_dtype, t.get_default_device, t.is_anomaly_enabled,
                     t.is_anomaly_check_nan_enabled, t.are_deterministic_algorithms_enabled,
                     t.is_deterministic_algorithms_warn_only_enabled, t.get_float32_matmul_precision)
        self._set = (t.set_grad_enabled, t.set_default_dtype, t.set_default_device, t.set_anomaly_enabled,
                     t.use_deterministic_algorithms, t.set_float32_matmul_precision)

    def start_test(self) -> None:
        now = tuple(get() for get in self._get)
        if self._saved is None:
            self._saved = now
            return
        if now == self._saved:
            return
        grad, dtype, device, anomaly, check_nan, deterministic, warn_only, precision = self._saved
        set_grad, set_dtype, set_device, set_anomaly, set_deterministic, set_precision = self._set
        set_grad(grad)
        set_dtype(dtype)
        set_device(device)
        set_anomaly(anomaly, check_nan)
        set_deterministic(deterministic, warn_only=warn_only)
        set_precision(precision)


class _GraderFault(Exception):
    """Wraps an exception of the grader's own code (a probe or the runtime), never the student's."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


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
