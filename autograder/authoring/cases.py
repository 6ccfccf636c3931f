"""Prove an assignment's suites sound by grading its own material.

The reference must earn full marks; the stubs 0; every correct alternative
full marks; every mutant must lose points on its own exercise and nowhere
else. Each submission is every exercise's reference code with one file
swapped in, one cell group per exercise, so a mutant is judged in context.

This module composes those submissions; ``torchgrader validate``
(:mod:`autograder.authoring.validate`) grades them and judges the results, after its
static authoring checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import Assignment
from autograder.authoring.change import case_code

SEP = "--"


@dataclass
class Case:
    """One generated submission and what it must score."""

    name: str
    kind: str  # reference | stub | alternative | mutant | nan | perturbed | identity
    exercise: str  # the exercise whose file was swapped ("" for reference/stub)
    source: Path  # the swapped-in file
    path: Path = field(default_factory=Path)


def compose(assignment: Assignment, swap: dict[str, Path], dest: Path, *, all_stubs: bool = False,
            stubs: tuple[str, ...] = ()) -> Path:
    """Write a .py submission: per exercise, its reference (or stub), with a swapped case on top.

    ``stubs`` names exercises whose stub stands in for the reference (``torchgrader try X --against stub``).
    """
    chunks = []
    for ex in assignment.exercises:
        base = ex.stub if all_stubs or ex.id in stubs or not ex.reference.exists() else ex.reference
        case = swap.get(ex.id)
        code, replaces = case_code(case, ex.reference) if case else ("", False)
        parts = []
        if base.exists() and not replaces:
            parts.append(base.read_text())
        if case:
            parts.append(code)
        if not parts:
            continue
        text = "\n\n".join(parts)
        chunks.append(f"# %% [{ex.id}]\n{text}")
    dest.write_text("\n\n".join(chunks) + "\n")
    return dest


# The NaN-returning mutant and its twin: every value the reference's functions (and its classes'
# forward/backward/__getitem__) return is passed through ``v * c + d``, with (c, d) NaN for one and
# finite for the other. A test that the finite twin fails checks values; if the NaN mutant passes it,
# a comparison there lets a NaN through (``abs(a - b) > tol`` is False for NaN).
# ``identity`` changes no value, only what the wrapper does to a returned tensor: validate's check that an
# unknown wrong answer gets no cause (autograder.authoring.unknown) keeps the keys it receives too.
POISONS = {"nan": ("float('nan')", "float('nan')"), "perturbed": ("1.375", "0.25"), "identity": ("1", "0")}
POISON = """
# torchgrader: generated {kind} mutant of {exercise}'s reference (validate's NaN check)
def _tg_poison(v, depth=0):
    import torch
    if depth > 8 or isinstance(v, bool):
        return v
    if isinstance(v, float) or (isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())):
        return v * {c} + {d}
    if type(v) is dict:
        return {{k: _tg_poison(x, depth + 1) for k, x in v.items()}}
    if type(v) in (list, tuple):
        return type(v)(_tg_poison(x, depth + 1) for x in v)
    return v


def _tg_tensors(args, kwargs):
    # the floating tensors a call may change in place: tensor arguments, and each module argument's
    # parameters (a module reached through an optimizer is the same tensors)
    import torch
    out, seen = [], set()
    for a in [*args, *kwargs.values()]:
        found = list(a.parameters()) if isinstance(a, torch.nn.Module) else [a]
        for t in found:
            if isinstance(t, torch.Tensor) and t.is_floating_point() and id(t) not in seen:
                seen.add(id(t))
                out.append(t)
    return out


def _tg_changed(before, now):
    import torch
    return before is None or before.shape != now.shape or not torch.equal(before, now.detach())


def _tg_poison_in_place(tensors, before):
    # what the call changed in place (a tensor's values, a parameter's .grad) through v * c + d too: a
    # function whose job is to set gradients or step weights returns None, and its wrong answer is there
    import torch
    with torch.no_grad():
        for t, (data, grad) in zip(tensors, before):
            if _tg_changed(data, t):
                t.mul_({c}).add_({d})
            if t.grad is not None and _tg_changed(grad, t.grad):
                t.grad.mul_({c}).add_({d})


def _tg_wrap(f, in_place=False):
    import functools

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        tensors = _tg_tensors(args, kwargs) if in_place else []
        before = [(t.detach().clone(), None if t.grad is None else t.grad.detach().clone()) for t in tensors]
        out = _tg_poison(f(*args, **kwargs))
        _tg_poison_in_place(tensors, before)
        return out
    return wrapped


for _tg_name in {functions!r}:
    globals()[_tg_name] = _tg_wrap(globals()[_tg_name], in_place=True)
for _tg_class, _tg_method in {methods!r}:
    _tg_owner = globals()[_tg_class]
    _tg_raw = vars(_tg_owner)[_tg_method]
    if isinstance(_tg_raw, staticmethod):
        setattr(_tg_owner, _tg_method, staticmethod(_tg_wrap(_tg_raw.__func__)))
    else:
        setattr(_tg_owner, _tg_method, _tg_wrap(_tg_raw))
"""
POISONED_METHODS = ("forward", "backward", "__getitem__", "__call__")


def poisoned(reference: Path, exercise: str, kind: str) -> str:
    """The source of ``kind``'s (nan | perturbed) mutant, appended to the exercise's reference."""
    import ast

    tree = ast.parse(reference.read_text())
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")]
    methods = [(c.name, m.name) for c in tree.body if isinstance(c, ast.ClassDef) and not c.name.startswith("_")
               for m in c.body if isinstance(m, ast.FunctionDef) and m.name in POISONED_METHODS]
    c, d = POISONS[kind]
    return POISON.format(kind=kind, exercise=exercise, c=c, d=d, functions=functions, methods=methods)


def cases(assignment: Assignment, exercises: list[str] | None, workdir: Path) -> list[Case]:
    chosen = [assignment.exercise(e) for e in exercises] if exercises else assignment.exercises
    out = [Case("reference", "reference", "", Path()), Case("stub", "stub", "", Path())]
    for ex in chosen:
        out += [Case(f"alternative{SEP}{ex.id}{SEP}{p.stem}", "alternative", ex.id, p) for p in ex.alternatives()]
        out += [Case(f"mutant{SEP}{ex.id}{SEP}{p.stem}", "mutant", ex.id, p) for p in ex.mutants()]
        if ex.reference.is_file():
            for kind in POISONS:
                src = workdir / f"{kind}{SEP}{ex.id}.source.py"
                src.write_text(poisoned(ex.reference, ex.id, kind))
                out.append(Case(f"{kind}{SEP}{ex.id}", kind, ex.id, src))
    for c in out:
        c.path = workdir / f"{c.name}.py"
        if c.kind == "stub":
            compose(assignment, {}, c.path, all_stubs=True)
        else:
            compose(assignment, {c.exercise: c.source} if c.exercise else {}, c.path)
    return out

