"""Tamper evidence: a static scan, in the judge, of what a submission's cells touch.

Student code shares its process with the sandbox runtime and the probes, so a
determined student can rewrite them. Every grade-relevant fact is decided in
the judge where it can be, and the runtime binds its machinery before student
code runs; on top of that, code that reaches for the grader or for the
machinery around it is *flagged* for a TA to review, with the cell and line of
each reason. Points stay as measured: a flag is evidence, never a penalty.

The scan runs here, in the judge, on the submission's source (never in the
sandbox, where it could be switched off). It must never fire on honest
solutions: tests run it over every reference, alternative and sample.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autograder.load import Submission
from autograder.results import Flag

# module -> attributes whose use is evidence of reaching into the interpreter
_CALLS = {
    "sys": {
        "modules": "reads or changes sys.modules (the table of loaded modules)",
        "_getframe": "inspects the call stack (sys._getframe)",
        "_current_frames": "inspects the call stack (sys._current_frames)",
        "settrace": "installs a trace function (sys.settrace), which can rewrite other frames",
        "setprofile": "installs a profile function (sys.setprofile)",
    },
    "gc": {
        "get_objects": "searches the garbage collector's objects (gc.get_objects)",
        "get_referrers": "searches the garbage collector's objects (gc.get_referrers)",
        "get_referents": "searches the garbage collector's objects (gc.get_referents)",
    },
    "inspect": {
        "currentframe": "inspects the call stack (inspect.currentframe)",
        "stack": "inspects the call stack (inspect.stack)",
        "trace": "inspects the call stack (inspect.trace)",
        "getouterframes": "inspects the call stack (inspect.getouterframes)",
        "getinnerframes": "inspects the call stack (inspect.getinnerframes)",
        "getclosurevars": "reads another function's closure (inspect.getclosurevars)",
    },
}
# attributes that reach another frame's or function's variables
_INTROSPECTION_ATTRS = {
    "f_back": "walks to the calling frame (f_back)",
    "f_locals": "reads a frame's local variables (f_locals)",
    "f_globals": "reads a frame's global variables (f_globals)",
    "f_builtins": "reads a frame's builtins (f_builtins)",
    "tb_frame": "reaches a frame through a traceback (tb_frame)",
    "gi_frame": "reaches a generator's frame (gi_frame)",
    "cr_frame": "reaches a coroutine's frame (cr_frame)",
    "__closure__": "reads another function's closure (__closure__)",
    "cell_contents": "reads or rewrites a closure cell (cell_contents)",
    "__globals__": "reads another function's globals (__globals__)",
}
_ASSIGNED_DUNDERS = {
    "__code__": "replaces a function's code (assigns __code__)",
    "__class__": "swaps an object's class (assigns __class__)",
    "__dict__": "replaces an object's attribute dictionary (assigns __dict__)",
}
_LOW_LEVEL_MODULES = {"ctypes", "_ctypes", "cffi"}
# modules whose attributes are part of Python (or the OS interface) itself: rebinding one is tampering
_PYTHON_ITSELF = ("sys", "gc", "builtins", "weakref", "inspect", "os", "posix", "io", "pathlib", "shutil")
# the methods that change a dict in place: on vars(x) or x.__dict__ they rewrite an object's attributes
_DICT_WRITES = {"clear", "update", "pop", "popitem", "setdefault", "__setitem__", "__delitem__"}
# The ways around an in-process measurement that a TA must see (issue 22); the README's threat model
# lists them, and tests/judge/test_tamper.py holds that list to this one.
KNOWN_BYPASSES = {
    "forward": "calls a module's forward past its __call__ (type(m).forward, m[i].forward), which module hooks "
    "never see",
    "attribute_dict": "writes an object's attribute dictionary (vars(...) or __dict__), which removes what a "
    "probe attached to it",
    "rebinds_machinery": "rebinds os.*, torch.load or torch.distributed.* (the functions a probe relies on)",
    "identity_function": "defines an identity torch.autograd.Function (its forward returns its input), a "
    "wrapper that puts a custom node in front of any graph",
    "mode_stack": "pushes or pops torch's mode stack (TorchFunctionMode / TorchDispatchMode), where the "
    "grader's measurements live",
}
# dotted-path prefixes (after alias resolution) that reach torch's mode stacks
_MODE_STACK_PREFIXES = ("torch.utils._python_dispatch", "torch.overrides.TorchFunctionMode", "torch.overrides._",
                        "torch._C._push_on_", "torch._C._pop_", "torch._C._set_torch_", "torch._C._unset_",
                        "torch._C._len_torch_", "torch._C._get_torch_", "torch._C.DisableTorchFunction",
                        "torch._C._DisableTorchDispatch", "torch._C._disabled_torch_", "torch._C._EnablePython",
                        "torch._C._DisablePython", "torch._C._DisableFuncTorch",
                        "torch._C._is_torch_function_mode_enabled", "torch.overrides.BaseTorchFunctionMode",
                        "torch._subclasses.fake_tensor", "torch._C._TorchDispatchModeKey")
# what an identity forward may do to its input and still return it unchanged
_IDENTITY_METHODS = {"clone", "view_as", "detach", "view", "reshape", "contiguous", "reshape_as", "requires_grad_"}
# torch attributes that are settings, not machinery: assigning them is ordinary use
_TORCH_SETTINGS = {"backends", "config"}


@dataclass
class _Scope:
    """Names bound to the modules the rules care about, per cell (imports carry over between cells)."""

    aliases: dict[str, str] = field(default_factory=dict)  # local name -> dotted module/object path


def scan(submission: Submission) -> list[Flag]:
    """Every reason to flag ``submission``, in cell order, one per (cell, line, reason)."""
    scope = _Scope()
    flags: list[Flag] = []
    seen: set[tuple[int, int, str]] = set()
    for cell in submission.cells:
        try:
            tree = ast.parse(cell.source)
        except (SyntaxError, ValueError):
            continue  # a cell that does not parse does not run either
        for line, reason in _Visitor(scope).run(tree):
            key = (cell.index, line, reason)
            if key not in seen:
                seen.add(key)
                flags.append(Flag(cell=cell.index, line=line, where=cell.location(line), reason=reason))
    return flags


class _Visitor(ast.NodeVisitor):
    def __init__(self, scope: _Scope) -> None:
        self.scope = scope
        self.found: list[tuple[int, str]] = []

    def run(self, tree: ast.AST) -> list[tuple[int, str]]:
        self.visit(tree)
        return self.found

    def flag(self, node: ast.AST, reason: str) -> None:
        self.found.append((getattr(node, "lineno", 0), reason))

    # ---------------------------------------------------------------- names
    def _path(self, node: ast.AST) -> str | None:
        """The dotted path an expression names (``torch.autograd.grad``), resolving import aliases."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        root = self.scope.aliases.get(node.id)
        if root is None:
            return None
        return ".".join([root, *reversed(parts)])

    def _bind(self, name: str, path: str) -> None:
        self.scope.aliases[name] = path

    # ---------------------------------------------------------------- imports
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self._check_module(node, a.name, None)
            if a.asname:
                self._bind(a.asname, a.name)
            else:
                head = a.name.split(".")[0]
                self._bind(head, head)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        for a in node.names:
            self._check_module(node, module, a.name)
            self._bind(a.asname or a.name, f"{module}.{a.name}")
        self.generic_visit(node)

    def _check_module(self, node: ast.AST, module: str, name: str | None) -> None:
        head = module.split(".")[0]
        if _is_mode_stack(f"{module}.{name}" if name else module):
            self.flag(node, KNOWN_BYPASSES["mode_stack"])
        if head == "autograder":
            # the students' own check cells: `from autograder import check` (a no-op while grading)
            if not (module == "autograder" and name in (None, "check")):
                self.flag(node, f"imports the grader's own code ({module}{'.' + name if name else ''})")
        elif head in _LOW_LEVEL_MODULES:
            self.flag(node, f"imports {head}, which can rewrite memory of the running interpreter")
        elif head.startswith("probes_"):
            self.flag(node, f"imports the grader's probes ({head})")
        elif name is not None:
            reason = _CALLS.get(module, {}).get(name)
            if reason:
                self.flag(node, reason)

    # ---------------------------------------------------------------- uses
    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = self._path(node)
        if path is not None:
            module, _, attr = path.rpartition(".")
            reason = _CALLS.get(module, {}).get(attr)
            if reason:
                self.flag(node, reason)
            if path.split(".")[0] == "autograder" and path != "autograder.check":
                self.flag(node, f"uses the grader's own code ({path})")
            if _is_mode_stack(path):
                self.flag(node, KNOWN_BYPASSES["mode_stack"])
        reason = _INTROSPECTION_ATTRS.get(node.attr)
        if reason:
            self.flag(node, reason)
        if node.attr == "forward" and _bypasses_call(node.value):
            self.flag(node, KNOWN_BYPASSES["forward"])
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        path = self.scope.aliases.get(node.id)
        if path is not None and isinstance(node.ctx, ast.Load):
            module, _, attr = path.rpartition(".")
            reason = _CALLS.get(module, {}).get(attr)
            if reason:
                self.flag(node, reason)
            if _is_mode_stack(path):
                self.flag(node, KNOWN_BYPASSES["mode_stack"])

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        bases = [self._path(b) for b in node.bases]
        if any(b in ("torch.autograd.Function", "torch.autograd.function.Function") for b in bases):
            forward = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
            if forward is not None and _returns_an_input(forward):
                self.flag(node, KNOWN_BYPASSES["identity_function"])
        if any(b is not None and _is_mode_stack(b) for b in bases):
            self.flag(node, KNOWN_BYPASSES["mode_stack"])
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if name in ("exec", "eval", "compile") and node.args and not _literal_str(node.args[0]):
            self.flag(node, f"runs code built at run time ({name} of a string that is not written in the cell)")
        if name == "__import__" and node.args and not _literal_str(node.args[0]):
            self.flag(node, "imports a module whose name is built at run time (__import__)")
        if isinstance(func, ast.Attribute) and func.attr in _DICT_WRITES and _is_attribute_dict(func.value):
            self.flag(node, KNOWN_BYPASSES["attribute_dict"])
        path = self._path(func)
        if path in ("importlib.import_module",) and node.args and not _literal_str(node.args[0]):
            self.flag(node, "imports a module whose name is built at run time (importlib.import_module)")
        if name in ("setattr", "delattr") and node.args:
            target = self._path(node.args[0])
            attr = node.args[1] if len(node.args) > 1 else None
            attr_name = attr.value if isinstance(attr, ast.Constant) and isinstance(attr.value, str) else None
            if attr_name in _ASSIGNED_DUNDERS:
                self.flag(node, _ASSIGNED_DUNDERS[attr_name])
            elif target is not None and _is_torch_machinery(target):
                self.flag(node, f"rebinds an attribute of {target} ({name})")
                if target.startswith("torch.distributed") or attr_name == "load":
                    self.flag(node, KNOWN_BYPASSES["rebinds_machinery"])
            elif target is not None and target.split(".")[0] in ("os", "posix"):
                self.flag(node, KNOWN_BYPASSES["rebinds_machinery"])
            elif target is not None and target.split(".")[0] == "autograder":
                self.flag(node, f"changes the grader's own code ({target})")
        self.generic_visit(node)

    # ---------------------------------------------------------------- assignments
    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            self._target(t)
        # `ag = torch.autograd` binds an alias the later rules must follow
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            path = self._path(node.value)
            if path is not None:
                self._bind(node.targets[0].id, path)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for t in node.targets:
            self._target(t, verb="deletes")
        self.generic_visit(node)

    def _target(self, t: ast.AST, verb: str = "rebinds") -> None:
        if isinstance(t, ast.Tuple | ast.List):
            for e in t.elts:
                self._target(e, verb)
            return
        if isinstance(t, ast.Subscript):
            path = self._path(t.value)
            if path == "sys.modules":
                self.flag(t, "changes sys.modules (the table of loaded modules)")
            if _is_attribute_dict(t.value):
                self.flag(t, KNOWN_BYPASSES["attribute_dict"])
            return
        if not isinstance(t, ast.Attribute):
            return
        if t.attr in _ASSIGNED_DUNDERS:
            self.flag(t, _ASSIGNED_DUNDERS[t.attr])
            return
        owner = self._path(t.value)
        if owner is None:
            return
        if owner.split(".")[0] == "autograder":
            self.flag(t, f"changes the grader's own code ({owner}.{t.attr})")
        elif _is_torch_machinery(f"{owner}.{t.attr}"):
            self.flag(t, f"{verb} {owner}.{t.attr}, part of PyTorch itself")
        elif owner.split(".")[0] in _PYTHON_ITSELF:
            self.flag(t, f"{verb} {owner}.{t.attr}, part of Python itself")
            if owner.split(".")[0] in ("os", "posix"):
                self.flag(t, KNOWN_BYPASSES["rebinds_machinery"])
        if owner.split(".")[0] == "torch" and (owner.startswith("torch.distributed") or t.attr == "load"
                                               or owner == "torch.serialization"):
            self.flag(t, KNOWN_BYPASSES["rebinds_machinery"])


def _is_torch_machinery(path: str) -> bool:
    parts = path.split(".")
    return parts[0] == "torch" and not (_TORCH_SETTINGS & set(parts))


def _literal_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)


def _is_mode_stack(path: str) -> bool:
    return path.startswith(_MODE_STACK_PREFIXES)


def _is_attribute_dict(node: ast.AST) -> bool:
    """``vars(x)`` (with an argument) or ``x.__dict__``: an object's own attribute dictionary."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars":
        return bool(node.args)
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def _bypasses_call(node: ast.AST) -> bool:
    """``type(m)``, ``m.__class__`` or ``m[i]``: an owner whose ``.forward`` skips a module's hooks."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type":
        return True
    return isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr == "__class__")


def _returns_an_input(forward: ast.FunctionDef) -> bool:
    """A Function's forward that returns one of its (non-ctx) inputs, as is or through a copy or a view."""
    inputs = {a.arg for a in forward.args.args[1:]} | ({forward.args.vararg.arg} if forward.args.vararg else set())
    returns = [n for n in ast.walk(forward) if isinstance(n, ast.Return) and n.value is not None]
    return bool(returns) and all(_is_input(r.value, inputs) for r in returns)  # type: ignore[arg-type]


def _is_input(node: ast.expr, inputs: set[str]) -> bool:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _IDENTITY_METHODS:
        node = node.func.value
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in inputs:
        return True  # args[0]
    return isinstance(node, ast.Name) and node.id in inputs
