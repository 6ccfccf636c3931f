"""What validate grades each case on: its own exercise, and every other exercise a swapped-in file can reach.

A mutant or an alternative is every exercise's reference with one file swapped
in (:mod:`autograder.authoring.cases`). Read from the files' syntax trees
(nothing is imported or run), :func:`reach` says which other suites such a file
could change and why; :func:`plan` turns that into each case's suites, so
``validate --quick`` grades a case only where its result can differ from the
reference's.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from autograder.assignment import Assignment
from autograder.authoring.cases import POISONS, Case
from autograder.authoring.change import is_change
from autograder.authoring.lint import defined_names, mutant_code, names_mentioned
from autograder.errors import ChangeMismatch


def plan(assignment: Assignment, cs: list[Case], scope: list[str], full: bool) -> dict[str, tuple[list[str], str]]:
    """Per case, the suites it is graded on (its own exercise first) and why any other one is included.

    The reference and the stubs are graded on every suite in scope. A swapped-in file is graded on its
    own exercise and on every other exercise it can reach (:func:`reach`): a file
    that defines no name another suite uses and has no global effect cannot change another exercise's
    results, so grading it there again would only repeat the reference's run. ``full`` grades every
    case on every suite in scope.
    """
    out: dict[str, tuple[list[str], str]] = {}
    for c in cs:
        if c.kind in POISONS:  # judged on its own exercise only
            out[c.name] = ([c.exercise], "")
            continue
        if not c.exercise or full:
            out[c.name] = (list(scope), "")
            continue
        others, why = reach(assignment, c.exercise, c.source)
        others = [e for e in others if e in scope]
        out[c.name] = ([c.exercise, *others], why if others else "")
    return out


_EFFECT_CALLS = {"setattr", "delattr", "exec", "eval", "__import__", "compile", "globals", "vars"}


def imported_names(tree: ast.Module) -> set[str]:
    """Names a module binds by importing (``torch``, ``F``): never one of its own definitions."""
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import | ast.ImportFrom):
            for a in n.names:
                out.add((a.asname or a.name).split(".")[0])
    return out


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def global_effects(tree: ast.Module) -> list[tuple[int, str]]:
    """Code that can change the sandbox for *other* exercises: (line, what).

    Module-level statements other than definitions, imports and assignments;
    ``global``/``nonlocal``; assignments into imported modules
    (``torch.compile = ...``); ``setattr``, ``exec`` and the like; and calls of
    ``set_*``/``use_*`` functions of imported modules (``torch.set_default_dtype``).
    """
    modules = imported_names(tree)
    out: list[tuple[int, str]] = []
    node: ast.AST
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import | ast.ImportFrom
                          | ast.Assign | ast.AnnAssign):
            out.append((node.lineno, f"module-level `{type(node).__name__}` statement"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal):
            out.append((node.lineno, f"`{type(node).__name__.lower()}` statement"))
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute | ast.Subscript) and _root_name(t) in modules:
                    out.append((node.lineno, f"assigns into the imported module `{_root_name(t)}`"))
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Name) and f.id in _EFFECT_CALLS:
                out.append((node.lineno, f"calls `{f.id}`"))
            elif isinstance(f, ast.Attribute) and f.attr.startswith(("set_", "use_")) and _root_name(f) in modules:
                out.append((node.lineno, f"calls `{f.attr}` of `{_root_name(f)}`"))
    return sorted(set(out))


def suite_names(ex_hidden: Path, ex_probes: Path) -> set[str]:
    """Names a suite can reach in the student's namespace: attributes and string constants it uses."""
    out: set[str] = set()
    for p in (ex_hidden, ex_probes):
        if p.is_file():
            out |= _names_used(p.read_text())
    return out


@functools.lru_cache(maxsize=256)
def _names_used(source: str) -> frozenset[str]:
    """Attributes and identifier-like string constants of one module's source.

    Cached on the text itself: :func:`reach` asks for every other exercise's suite once per case (some 2,300
    parses of the same eleven files for one assignment's validate), and a file that changes is a new key.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    return frozenset(names_mentioned(tree, bare_names=False))


def _bindings(tree: ast.Module) -> dict[str, str]:
    """name -> dump of the top-level statements that bind it (to tell which names a change redefines)."""
    out: dict[str, str] = {}
    for node in tree.body:
        for name in defined_names(ast.Module(body=[node], type_ignores=[])):
            out[name] = out.get(name, "") + ast.dump(node, include_attributes=False)
    return out


def reach(assignment: Assignment, exercise: str, path: Path) -> tuple[list[str], str]:
    """The other exercises whose grading a swapped-in file of ``exercise`` could change, and why.

    A file can change another exercise's results only through the sandbox they
    share: by defining a name that exercise's suite uses, or by a global effect
    (:func:`global_effects`) the reference does not have. Everything else is
    confined to its own exercise.
    """
    ex = assignment.exercise(exercise)
    try:
        tree = ast.parse(mutant_code(path, ex.reference))
    except (OSError, SyntaxError, ChangeMismatch):
        return [e.id for e in assignment.exercises if e.id != exercise], "it does not parse"
    try:
        ref_tree: ast.Module | None = ast.parse(ex.reference.read_text())
    except (OSError, SyntaxError):
        ref_tree = None
    ref_effects = {w for _, w in global_effects(ref_tree)} if ref_tree is not None else set()
    effects = [(line, w) for line, w in global_effects(tree) if w not in ref_effects]
    others = [e for e in assignment.exercises if e.id != exercise]
    if effects:
        line, what = effects[0]
        return [e.id for e in others], f"{path.name}:{line} {what}"
    defined = {n for n, _ in defined_names(tree).items()} - imported_names(tree)
    if ref_tree is not None and is_change(path.read_text(encoding="utf-8")):  # only what the change redefines
        before, after = _bindings(ref_tree), _bindings(tree)
        defined = {n for n in defined if after.get(n) != before.get(n)}
    hit = []
    for e in others:
        shared = defined & suite_names(e.hidden_tests, e.probes)
        if shared:
            hit.append((e.id, sorted(shared)))
    if hit:
        return [i for i, _ in hit], "; ".join(f"{i}'s suite uses {', '.join(f'`{n}`' for n in names)}"
                                              for i, names in hit)
    return [], ""
