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
        reason = _INTROSPECTION_ATTRS.get(node.attr)
        if reason:
            self.flag(node, reason)
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        path = self.scope.aliases.get(node.id)
        if path is not None and isinstance(node.ctx, ast.Load):
            module, _, attr = path.rpartition(".")
            reason = _CALLS.get(module, {}).get(attr)
            if reason:
                self.flag(node, reason)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        if name in ("exec", "eval", "compile") and node.args and not _literal_str(node.args[0]):
            self.flag(node, f"runs code built at run time ({name} of a string that is not written in the cell)")
        if name == "__import__" and node.args and not _literal_str(node.args[0]):
            self.flag(node, "imports a module whose name is built at run time (__import__)")
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
        elif owner.split(".")[0] in ("sys", "gc", "builtins", "weakref", "inspect"):
            self.flag(t, f"{verb} {owner}.{t.attr}, part of Python itself")


def _is_torch_machinery(path: str) -> bool:
    parts = path.split(".")
    return parts[0] == "torch" and not (_TORCH_SETTINGS & set(parts))


def _literal_str(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)
