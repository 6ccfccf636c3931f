"""Mechanical mutants of an exercise's reference, and the record of what its hidden suite does to them.

The hand-written mutants of ``mutants/`` are the mistakes someone thought of. This module makes the
others: every small mechanical change to ``reference.py`` (an operator, a constant, a call dropped or
replaced, a statement dropped, two arguments swapped, an in-place operation made out-of-place or the
reverse). ``torchgrader mutate`` (:mod:`autograder.authoring.mutate`) grades each against the hidden
suite; a mutant that earns full marks *survives*, and each survivor is either caught by a new test or
recorded here, in the exercise's ``mutation.toml``, as equivalent with a one-line reason. ``validate``
shows the score it records, and fails when the record is stale (the reference changed since) or a
survivor is still unexplained.

The operators are mutmut's (``mutmut.mutation.mutators``: numbers, strings, names, assignments,
operator swaps, argument removal, ...), applied with libcst so that a mutant is the reference with one
expression changed and every other byte kept; the ones mutmut does not have, and that PyTorch code
needs, are written here in the same form (a node type and a function yielding its replacements).

A mutant is written as a change to the reference (:mod:`autograder.authoring.change`), the format of
hand-written mutants: a survivor that is a real mistake can be copied into ``mutants/`` as it is. Its id
names the function, the operator and a digest of the lines it changes, not their line numbers, so an
edit elsewhere in the reference keeps every id.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from autograder.assignment import MUTATION_RECORD, REFERENCE, ExerciseLayout, MutationRecord, read_mutation_record
from autograder.authoring.change import minimal_change
from autograder.authoring.lint import top_level_defs

EQUIVALENT = "equivalent"  # a survivor no test can catch: the mutant computes what the reference does
OPEN = "open"  # a survivor nobody has looked at yet: catch it with a test, or record why it is equivalent
TOOL = "mutmut"  # the distribution whose operators generate most mutants (its version goes into the record)

# Functions and methods a mutant swaps for a near neighbour (both directions unless the name says otherwise).
SWAPS = {
    "sum": "mean", "mean": "sum", "max": "min", "min": "max", "amax": "amin", "amin": "amax",
    "argmax": "argmin", "argmin": "argmax", "softmax": "log_softmax", "log_softmax": "softmax",
    "exp": "log", "log": "exp", "relu": "sigmoid", "zeros": "ones", "ones": "zeros",
    "zeros_like": "ones_like", "ones_like": "zeros_like", "reshape": "view", "view": "reshape",
    "clone": "detach", "detach": "clone", "round": "floor", "floor": "ceil", "ceil": "floor",
    "no_grad": "enable_grad", "enable_grad": "no_grad", "cross_entropy": "nll_loss", "mse_loss": "l1_loss",
    "randn": "rand", "state_dict": "named_parameters", "parameters": "buffers",
    "squeeze": "unsqueeze", "unsqueeze": "squeeze", "item": "tolist", "contiguous": "clone",
}
# Tensor methods that have an in-place twin (``x.add(y)`` -> ``x.add_(y)``); any ``name_`` loses its ``_``.
IN_PLACE = frozenset({
    "add", "sub", "mul", "div", "pow", "clamp", "clamp_min", "clamp_max", "exp", "log", "neg", "abs", "round",
    "floor", "ceil", "sqrt", "square", "relu", "sigmoid", "tanh", "masked_fill", "index_add", "scatter",
    "squeeze", "unsqueeze", "t", "transpose", "detach", "fill", "copy", "zero", "requires_grad",
})


@dataclass(frozen=True)
class Mutant:
    """One mechanical change to a reference: what it changes, as a change mutant's ``CHANGE`` body."""

    id: str  # "<function>/<operator>/<digest>": stable while the lines it changes stay as they are
    operator: str
    function: str  # the qualified name of the function it changes ("Cube.backward")
    line: int  # the first reference line it changes
    change: str  # ``diff -U0`` hunks against the reference (autograder.authoring.change)
    code: str  # the reference with the change applied


# ---------------------------------------------------------------------- operators mutmut does not have
def _cst() -> Any:
    import libcst

    return libcst


def op_drop_statement(node: Any) -> Iterable[Any]:
    """Each statement of a block dropped (``pass`` in its place), and each ``with`` block run without its
    context manager. A docstring and a ``return`` are kept: dropping them is never a subtle mistake."""
    cst = _cst()
    body = list(node.body)
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine):
            small = stmt.body
            if any(isinstance(s, cst.Return | cst.Pass) for s in small) or (
                    i == 0 and isinstance(small[0], cst.Expr) and isinstance(small[0].value, cst.SimpleString)):
                continue
            yield node.with_changes(body=[*body[:i], stmt.with_changes(body=[cst.Pass()]), *body[i + 1:]])
        elif isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
            inner = list(stmt.body.body)
            if inner:
                inner[0] = inner[0].with_changes(leading_lines=stmt.leading_lines)
            yield node.with_changes(body=[*body[:i], *inner, *body[i + 1:]])


def op_swap_arguments(node: Any) -> Iterable[Any]:
    """Two neighbouring positional arguments swapped: ``f(a, b)`` -> ``f(b, a)``."""
    args = list(node.args)
    for i in range(len(args) - 1):
        a, b = args[i], args[i + 1]
        if a.keyword is None and b.keyword is None and not a.star and not b.star:
            swapped = [*args[:i], a.with_changes(value=b.value), b.with_changes(value=a.value), *args[i + 2:]]
            yield node.with_changes(args=swapped)


def op_replace_call(node: Any) -> Iterable[Any]:
    """A function or method replaced by its near neighbour (:data:`SWAPS`): ``sum`` -> ``mean``, ..."""
    cst = _cst()
    func = node.func
    if isinstance(func, cst.Name) and func.value in SWAPS:
        yield node.with_changes(func=func.with_changes(value=SWAPS[func.value]))
    elif isinstance(func, cst.Attribute) and func.attr.value in SWAPS:
        yield node.with_changes(func=func.with_changes(attr=func.attr.with_changes(value=SWAPS[func.attr.value])))


def op_in_place(node: Any) -> Iterable[Any]:
    """``x.add_(y)`` -> ``x.add(y)`` and ``x.add(y)`` -> ``x.add_(y)`` (:data:`IN_PLACE`)."""
    cst = _cst()
    func = node.func
    if not isinstance(func, cst.Attribute):
        return
    name = func.attr.value
    if name.endswith("_") and not name.startswith("_") and not name.endswith("__"):
        yield node.with_changes(func=func.with_changes(attr=func.attr.with_changes(value=name[:-1])))
    elif name in IN_PLACE:
        yield node.with_changes(func=func.with_changes(attr=func.attr.with_changes(value=name + "_")))


def op_out_of_place_assign(node: Any) -> Iterable[Any]:
    """``a += b`` -> ``a = a + b``: the name is rebound to a new tensor instead of the old one updated."""
    cst = _cst()
    binary = {cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
              cst.DivideAssign: cst.Divide, cst.PowerAssign: cst.Power}.get(type(node.operator))
    if binary is not None:
        value = cst.BinaryOperation(left=node.target, operator=binary(), right=node.value)
        yield cst.Assign(targets=[cst.AssignTarget(node.target)], value=value, semicolon=node.semicolon)


def op_in_place_assign(node: Any) -> Iterable[Any]:
    """``a = a + b`` -> ``a += b``: the tensor ``a`` named is updated in place (any other name for it too)."""
    cst = _cst()
    aug = {cst.Add: cst.AddAssign, cst.Subtract: cst.SubtractAssign, cst.Multiply: cst.MultiplyAssign,
           cst.Divide: cst.DivideAssign, cst.Power: cst.PowerAssign}
    value = node.value
    if (len(node.targets) == 1 and isinstance(value, cst.BinaryOperation) and type(value.operator) in aug
            and value.left.deep_equals(node.targets[0].target)):
        yield cst.AugAssign(target=node.targets[0].target, operator=aug[type(value.operator)](), value=value.right,
                            semicolon=node.semicolon)


def op_drop_call(node: Any, imported: frozenset[str] = frozenset()) -> Iterable[Any]:
    """A call dropped, its argument (or receiver) kept: ``torch.relu(a)`` -> ``a``, ``x.detach()`` -> ``x``."""
    cst = _cst()
    func = node.func
    positional = [a for a in node.args if a.keyword is None and not a.star]
    module_function = isinstance(func, cst.Name) or (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in imported)
    if module_function:
        if len(positional) == 1 and len(node.args) == 1:
            yield positional[0].value
    elif isinstance(func, cst.Attribute):
        yield func.value


def operators(imported: frozenset[str] = frozenset()) -> list[tuple[str, type, Callable[[Any], Iterable[Any]]]]:
    """(name, node type, function yielding replacement nodes): mutmut's operators, then this module's.

    ``imported`` names the reference's modules (``torch``, ``F``): ``torch.relu(a)`` is a function call
    whose argument stays when it is dropped, ``x.relu()`` a method call whose receiver stays."""
    cst = _cst()
    from mutmut.mutation.mutators import mutation_operators

    out = [(fn.__name__.removeprefix("operator_"), kind, fn) for kind, fn in mutation_operators]
    out += [
        ("drop_statement", cst.IndentedBlock, op_drop_statement),
        ("swap_arguments", cst.Call, op_swap_arguments),
        ("replace_call", cst.Call, op_replace_call),
        ("in_place", cst.Call, op_in_place),
        ("out_of_place", cst.AugAssign, op_out_of_place_assign),
        ("in_place", cst.Assign, op_in_place_assign),
        ("drop_call", cst.Call, lambda node: op_drop_call(node, imported)),
    ]
    return out


def tool_version() -> str:
    """The generator, as the record names it: mutmut's version (its operators are most of them)."""
    from importlib.metadata import version

    return f"{TOOL} {version(TOOL)} operators with torchgrader's"


# ---------------------------------------------------------------------- generating
def _candidates(module: Any, given: frozenset[str] = frozenset()) -> Iterator[tuple[Any, str]]:
    """Every node inside a function (its body and its parameters' defaults) with the function's qualified
    name; decorators, annotations and docstrings are not code a student writes differently, nor are the
    top-level definitions named in ``given``."""
    cst = _cst()
    found: list[tuple[Any, str]] = []

    class Visitor(cst.CSTVisitor):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.names: list[str] = []
            self.depth = 0  # functions we are inside

        def visit_ClassDef(self, node: Any) -> bool:
            top = not self.names
            self.names.append(node.name.value)
            return not (top and node.name.value in given)

        def leave_ClassDef(self, node: Any) -> None:
            self.names.pop()

        def visit_FunctionDef(self, node: Any) -> bool:
            if not self.names and node.name.value in given:
                return False
            self.names.append(node.name.value)
            self.depth += 1
            node.params.visit(self)
            node.body.visit(self)
            self.depth -= 1
            self.names.pop()
            return False  # decorators, the name and the annotations are not visited

        def visit_Annotation(self, node: Any) -> bool:
            return False

        def visit_Expr(self, node: Any) -> bool:
            return not isinstance(node.value, cst.SimpleString)  # a docstring

        def on_visit(self, node: Any) -> bool:
            if self.depth and not isinstance(node, cst.FunctionDef):
                found.append((node, ".".join(self.names)))
            return super().on_visit(node)

    module.visit(Visitor())
    yield from found


def _imported(module: Any) -> frozenset[str]:
    cst = _cst()
    names: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Import | cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        target = alias.asname.name if alias.asname else alias.name
                        names.add(cst.helpers.get_full_name_for_node(target).split(".")[0])
    return frozenset(names)


def _digest(change: str) -> str:
    """A digest of the lines a change removes and adds (not where: an edit elsewhere keeps it)."""
    body = "\n".join(ln for ln in change.splitlines() if not ln.startswith("@@"))
    return hashlib.sha256(body.encode()).hexdigest()[:8]


def _first_line(change: str) -> int:
    head = next(ln for ln in change.splitlines() if ln.startswith("@@"))
    return int(head.split()[1].lstrip("-").split(",")[0])


def given_names(reference: str, stub: str | None) -> frozenset[str]:
    """The top-level definitions the stub gives students exactly as the reference has them (the compile
    exercise's ``ChattyMLP``): not theirs to write, so not theirs to get wrong, and never mutated."""
    if stub is None:
        return frozenset()
    try:
        ref, given = top_level_defs(ast.parse(reference)), top_level_defs(ast.parse(stub))
    except SyntaxError:
        return frozenset()
    return frozenset(name for name, dump in given.items() if ref.get(name) == dump)


def mutants_of(layout: ExerciseLayout) -> list[Mutant]:
    """The mechanical mutants of an exercise's reference, less the code its stub gives students."""
    reference = layout.reference.read_text(encoding="utf-8")
    stub = layout.stub.read_text(encoding="utf-8") if layout.stub.is_file() else None
    return generate(reference, given_names(reference, stub))


def generate(reference: str, given: frozenset[str] = frozenset()) -> list[Mutant]:
    """Every mechanical mutant of ``reference`` that compiles and differs from it, each once, in source order
    (none in the top-level definitions named in ``given``)."""
    cst = _cst()
    module = cst.parse_module(reference)
    ops = operators(_imported(module))
    seen = {reference}
    out: list[Mutant] = []
    ids: dict[str, int] = {}
    for node, function in _candidates(module, given):
        for name, kind, fn in ops:
            if not isinstance(node, kind):
                continue
            for new in fn(node):
                try:
                    code = module.deep_replace(node, new).code
                    compile(code, REFERENCE, "exec")
                except Exception:  # noqa: BLE001 - a replacement that does not render or compile is no mutant
                    continue
                if code in seen:
                    continue
                seen.add(code)
                change = minimal_change(reference, code)
                base = f"{function}/{name}/{_digest(change)}"
                ids[base] = ids.get(base, 0) + 1
                mid = base if ids[base] == 1 else f"{base}-{ids[base]}"
                out.append(Mutant(mid, name, function, _first_line(change), change, code))
    return sorted(out, key=lambda m: (m.line, m.id))


# ---------------------------------------------------------------------- the record
def reference_digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass
class RecordCheck:
    """What ``validate`` and the fast test say about one exercise's recorded analysis."""

    record: MutationRecord | None
    problems: list[str] = field(default_factory=list)  # each makes the record unusable or incomplete

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """"score 97% (38 of 39 killed; 2 equivalent; 45 mutants)" or why there is none."""
        r = self.record
        if r is None:
            return "no mutation analysis recorded"
        equivalent = sum(s.status == EQUIVALENT for s in r.survivors)
        open_ = sum(s.status != EQUIVALENT for s in r.survivors)
        counted = r.generated - equivalent
        pct = 100.0 * r.killed / counted if counted else 100.0
        extra = f"; {open_} unexplained survivor(s)" if open_ else ""
        return (f"score {pct:.0f}% ({r.killed} of {counted} killed; {equivalent} equivalent; {r.generated} "
                f"mutants{extra})")

    @property
    def score(self) -> float | None:
        r = self.record
        if r is None:
            return None
        counted = r.generated - sum(s.status == EQUIVALENT for s in r.survivors)
        return r.killed / counted if counted else 1.0


def check_record(layout: ExerciseLayout, *, regenerate: bool = False) -> RecordCheck:
    """The exercise's ``mutation.toml`` against its reference as it is now.

    Stale when the reference changed since the analysis (its digest), or when a recorded survivor's change
    no longer applies to it; unfinished when a survivor is neither caught nor explained. ``regenerate`` also
    asks the generator whether it still makes each recorded survivor (needs mutmut).
    """
    record, problems = read_mutation_record(layout)
    if record is None:
        return RecordCheck(None, [p.message for p in problems if p.message != "missing"])
    out = RecordCheck(record, [p.message for p in problems])
    rerun = f"rerun `torchgrader mutate` on it and explain each survivor again ({MUTATION_RECORD})"
    try:
        text = layout.reference.read_text(encoding="utf-8")
    except OSError as e:
        out.problems.append(f"its reference cannot be read ({e.strerror})")
        return out
    if record.reference != reference_digest(text):
        out.problems.append(f"stale: {REFERENCE} changed since the analysis was recorded; {rerun}")
    from autograder.authoring.change import apply_hunks, read_hunks
    from autograder.errors import ChangeMismatch

    made = {m.id: m for m in mutants_of(layout)} if regenerate else None
    for s in record.survivors:
        try:
            hunks = read_hunks(layout.reference, f"CHANGE = r'''\n{s.change}'''\n")
            apply_hunks(text.splitlines(), hunks, layout.mutation_record, layout.reference)
        except ChangeMismatch as e:
            out.problems.append(f"survivor {s.id}: its change no longer applies to {REFERENCE} ({e.message}); {rerun}")
            continue
        if made is not None and (s.id not in made or made[s.id].change != s.change):
            out.problems.append(f"survivor {s.id}: the generator no longer makes this mutant; {rerun}")
        if s.status != EQUIVALENT:
            out.problems.append(f"survivor {s.id} ({s.operator} in {s.function}) is unexplained: catch it with a "
                                f"hidden test, or set its status to \"{EQUIVALENT}\" with a one-line reason")
        elif not s.reason.strip():
            out.problems.append(f"survivor {s.id} is recorded as equivalent without a reason: say in one line why "
                                "no test can tell it from the reference")
    return out
