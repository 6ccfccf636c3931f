"""Static checks of an assignment's material: authoring mistakes, found before anything runs.

Everything here reads files and parses them (``ast``; the TOML files through
:mod:`autograder.assignment`, the one loader of the course's files); nothing is
imported or executed except in :func:`collect_suites`, which lets pytest
collect the suites (importing the test modules, never student code) to count
points exactly as grading will. Each problem names the file and, where there
is one, the line.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from autograder.assignment import (
    STUB,
    Assignment,
    CourseDir,
    ExerciseLayout,
    FileProblem,
    read_assignment_toml,
    read_exercise_toml,
    toml_line,
)
from autograder.authoring.change import applied, is_change, is_whole_file
from autograder.errors import ChangeMismatch
from autograder.judge import collect

ID_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")
MISCONCEPTION_HEADER = re.compile(r"^#\s*misconception:(.*)$")
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class Problem:
    """One authoring mistake: the file, the line when there is one, what is wrong."""

    path: Path
    line: int | None
    message: str
    exercise: str = ""

    def where(self, base: Path | None = None) -> str:
        p = self.path
        if base is not None:
            with contextlib.suppress(ValueError):
                p = self.path.resolve().relative_to(base.resolve())
        return f"{p}:{self.line}" if self.line else str(p)

    def format(self, base: Path | None = None) -> str:
        return f"{self.where(base)}: {self.message}"


# ---------------------------------------------------------------------- ast helpers
def parse_file(path: Path, problems: list[Problem], exercise: str = "") -> ast.Module | None:
    """The module's AST, or None with a problem naming the file and line."""
    try:
        src = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        problems.append(Problem(path, None, "is not UTF-8 text", exercise))
        return None
    except OSError as e:
        problems.append(Problem(path, None, f"cannot be read ({e.strerror})", exercise))
        return None
    try:
        return ast.parse(src, filename=str(path))
    except SyntaxError as e:
        problems.append(Problem(path, e.lineno, f"does not parse: {e.msg}", exercise))
        return None


def _strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def body_dump(body: list[ast.stmt]) -> str:
    """A normalized form of some statements: docstring dropped, no line numbers or comments."""
    return ast.dump(ast.Module(body=_strip_docstring(body), type_ignores=[]), include_attributes=False)


def module_dump(tree: ast.Module) -> str:
    return body_dump(tree.body)


def find_tests(tree: ast.Module) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.expr]]]:
    """pytest's default collection: module-level ``test*`` functions and ``test*`` methods of ``Test*`` classes.

    Each comes with the marks that apply from outside it (class decorators, ``pytestmark``).
    """
    module_marks: list[ast.expr] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark"
                                                for t in node.targets):
            v = node.value
            module_marks += list(v.elts) if isinstance(v, ast.List | ast.Tuple) else [v]
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test"):
            out.append((node, module_marks))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for m in node.body:
                if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef) and m.name.startswith("test"):
                    out.append((m, module_marks + node.decorator_list))
    return out


def _mark_name(expr: ast.expr) -> str | None:
    """``pytest.mark.points(2)`` -> "points"."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute) \
            and target.value.attr == "mark":
        return target.attr
    return None


def points_mark(fn: ast.FunctionDef | ast.AsyncFunctionDef, outer: list[ast.expr]) -> tuple[bool, float | None]:
    """(has a points mark, its value when it is a literal number)."""
    for d in [*fn.decorator_list, *outer]:
        if _mark_name(d) == "points":
            if isinstance(d, ast.Call) and len(d.args) == 1 and isinstance(d.args[0], ast.Constant) \
                    and isinstance(d.args[0].value, int | float) and not isinstance(d.args[0].value, bool):
                return True, float(d.args[0].value)
            return True, None
    return False, None


def _has_mark(fn: ast.FunctionDef | ast.AsyncFunctionDef, outer: list[ast.expr], name: str) -> bool:
    return any(_mark_name(d) == name for d in [*fn.decorator_list, *outer])


def defined_names(tree: ast.Module) -> dict[str, int]:
    """Top-level names a module defines (def, class, assignment, import), with their lines."""
    out: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.setdefault(node.name, node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.setdefault(n.id, node.lineno)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for a in node.names:
                out.setdefault((a.asname or a.name).split(".")[0], node.lineno)
    return out


def _raises_not_implemented(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Raise) and n.exc is not None:
            target = n.exc.func if isinstance(n.exc, ast.Call) else n.exc
            if isinstance(target, ast.Name) and target.id == "NotImplementedError":
                return True
    return False


def contract_names(stub: ast.Module, used: set[str] | None = None) -> dict[str, int]:
    """What students must write: the stub's top-level functions and classes left to implement.

    Given code (no ``raise NotImplementedError``) is not part of the contract; with ``used``
    (names the suites mention), only what the suites call counts.
    """
    return {n.name: n.lineno for n in stub.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and _raises_not_implemented(n)
            and (used is None or n.name in used)}


def top_level_defs(tree: ast.Module) -> dict[str, str]:
    """name -> normalized dump of its definition, for top-level functions and classes."""
    return {n.name: ast.dump(n, include_attributes=False) for n in tree.body
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}


def file_problems(found: list[FileProblem], exercise: str = "") -> list[Problem]:
    """The loader's findings in a course file (:mod:`autograder.assignment`), as problems of this report."""
    return [Problem(f.path, f.line, f.message, exercise) for f in found]


# ---------------------------------------------------------------------- mutant headers
def misconception_header(text: str) -> tuple[int, list[str]] | None:
    """The line number and keys of a mutant's ``# misconception: key[, key2]`` header (``none``: no key).

    The header is how a mutant says which misconception message its feedback must carry, so that
    ``validate`` checks the diagnosis and not only the score. None when the file has no header.
    """
    for i, line in enumerate(text.splitlines(), start=1):
        m = MISCONCEPTION_HEADER.match(line.strip())
        if m:
            keys = [k.strip() for k in m.group(1).split(",")]
            return i, [] if keys == ["none"] else keys
    return None


def declared_misconceptions(path: Path) -> list[str] | None:
    """The keys a mutant file declares ([] for ``none``), or None without a (readable) header."""
    try:
        found = misconception_header(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return None if found is None else found[1]


def header_problems(path: Path, text: str) -> list[tuple[int | None, str]]:
    """What is wrong with a mutant's misconception header, as (line, message)."""
    found = misconception_header(text)
    if found is None:
        return [(1, "a mutant needs a header line `# misconception: key` (the key of the misconception message its "
                    "feedback must carry; comma-separated keys allowed; `# misconception: none` when only a generic "
                    "\"wrong values\" message can catch it)")]
    line, keys = found
    bad = [k for k in keys if not KEY_PATTERN.match(k) or k == "none"]
    if keys == [""]:
        return [(line, "the misconception header names no key: write `# misconception: key` or "
                       "`# misconception: none`")]
    if bad:
        return [(line, f"misconception key(s) {', '.join(repr(k) for k in bad)} are not keys: letters, digits, "
                       "`_`, `.`, `-` (and `none` only alone)")]
    return []


# ---------------------------------------------------------------------- the misconception registry
REGISTRY = "MISCONCEPTIONS"


@dataclass
class SuiteKeys:
    """The misconception keys a hidden suite can name, and its registry of their sentences.

    ``registry`` is the suite's module-level ``MISCONCEPTIONS = {key: sentence}`` (a literal dict),
    the one place where a key's sentence is written: grading appends it to a failure keyed with it
    (:mod:`autograder.judge.plugin`), and validate reads it to check that a mutant's feedback says its
    own misconception's sentence and no other's. ``named`` maps every key the suite can give (the
    registry's, each literal ``misconception="key"`` of a ``fail``/``check``, conditional ones too, and every
    key of a dict-keyed ``misconceptions={key: (sentence, value)}`` form: :class:`_DictKeys`)
    to its line: validate fails a key that no mutant's feedback receives.
    """

    registry: dict[str, str] | None = None
    named: dict[str, int] = field(default_factory=dict)
    line: int | None = None  # the registry's
    written: dict[str, str] = field(default_factory=dict)  # a dict-keyed key's literal sentence (its tuple's first)

    @property
    def sentences(self) -> dict[str, str]:
        """Every key's sentence the suite writes out: the registry's, then the dict-keyed forms' literal ones."""
        return {**self.written, **(self.registry or {})}


def _key_literals(expr: ast.expr) -> list[ast.Constant]:
    """The string constants an expression can evaluate to: itself, or the branches of ``a if c else b`` / ``or``."""
    if isinstance(expr, ast.Constant):
        return [expr] if isinstance(expr.value, str) and expr.value else []
    if isinstance(expr, ast.IfExp):
        return _key_literals(expr.body) + _key_literals(expr.orelse)
    if isinstance(expr, ast.BoolOp):
        return [c for v in expr.values for c in _key_literals(v)]
    return []


class _DictKeys:
    """The keys of the misconception dicts a suite builds: ``assert_close(..., misconceptions={key: (why, value)})``.

    A dict can be written in place, bound to a name first (``wrong = {...}``, ``wrong["k"] = ...``,
    ``wrong.update({...})``), built by a comprehension over another (``{k: ... for k, v in wrong.items()}``),
    returned by a module-level helper (``misconceptions=_cube_misconceptions(x)``), any of these behind
    a ``lambda`` (``misconceptions=lambda: _cube_misconceptions(x)``, built only for a wrong result), or
    handed to a helper that names the key itself (``fail(..., misconception=key)`` with ``key`` not a
    literal: every dict argument of a call to it). Each form's literal keys are found here, so that
    validate's key check sees every key a suite can name, not only the ``misconception="key"`` literals.
    """

    def __init__(self, tree: ast.Module) -> None:
        self.funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
        # helpers that name a key taken from a dict argument: name -> positions of the parameters they iterate
        self.namers: dict[str, list[int]] = {}
        for name, f in self.funcs.items():
            if not any(isinstance(n, ast.keyword) and n.arg == "misconception" and not isinstance(n.value, ast.Constant)
                       for n in ast.walk(f)):
                continue
            params = [a.arg for a in f.args.args]
            # ``for key, (why, value) in wrong.items()``: a dict of (sentence, wrong value) pairs
            loops = [(n.target, n.iter) for n in ast.walk(f) if isinstance(n, ast.For | ast.comprehension)]
            iterated = {it.func.value.id for target, it in loops
                        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items"
                        and isinstance(it.func.value, ast.Name) and isinstance(target, ast.Tuple)
                        and len(target.elts) == 2 and isinstance(target.elts[1], ast.Tuple)}
            if at := [i for i, p in enumerate(params) if p in iterated]:
                self.namers[name] = at

    def keys(self, tree: ast.Module) -> dict[str, int]:
        out: dict[str, int] = {}
        self.sentences: dict[str, str] = {}
        for fn in self.funcs.values():
            for n in ast.walk(fn):
                exprs: list[ast.expr] = []
                if isinstance(n, ast.keyword) and n.arg == "misconceptions":
                    exprs = [n.value]
                elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in self.namers
                      and n.func.id != fn.name):
                    f = self.funcs[n.func.id]
                    names = [f.args.args[i].arg for i in self.namers[n.func.id]]
                    exprs = [n.args[i] for i in self.namers[n.func.id] if i < len(n.args)]
                    exprs += [k.value for k in n.keywords if k.arg in names]
                for e in exprs:
                    for c in self._of(e, fn, frozenset()):
                        out.setdefault(str(c.value), c.lineno)
        return out

    def _of(self, expr: ast.expr, scope: ast.FunctionDef, seen: frozenset[str]) -> list[ast.Constant]:
        if isinstance(expr, ast.Dict):
            found = []
            for k, v in zip(expr.keys, expr.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    found.append(k)
                    if (isinstance(v, ast.Tuple) and v.elts and isinstance(v.elts[0], ast.Constant)
                            and isinstance(v.elts[0].value, str) and len(v.elts[0].value) >= 20):
                        self.sentences.setdefault(k.value, v.elts[0].value)
            return found
        if isinstance(expr, ast.DictComp):
            return [c for gen in expr.generators for c in self._items_of(gen.iter, scope, seen)]
        if isinstance(expr, ast.Subscript):  # wrong[k]: one entry of a dict of dicts, or of the dict itself
            return self._of(expr.value, scope, seen)
        if isinstance(expr, ast.BoolOp):
            return [c for v in expr.values for c in self._of(v, scope, seen)]
        if isinstance(expr, ast.Lambda):  # misconceptions=lambda: {...}: built only when a result is wrong
            return self._of(expr.body, scope, seen)
        if isinstance(expr, ast.Name):
            return self._bound(expr.id, scope, seen)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.funcs \
                and expr.func.id not in seen:
            f = self.funcs[expr.func.id]
            return [c for n in ast.walk(f) if isinstance(n, ast.Return) and n.value is not None
                    for c in self._of(n.value, f, seen | {f.name})]
        return []

    def _items_of(self, it: ast.expr, scope: ast.FunctionDef, seen: frozenset[str]) -> list[ast.Constant]:
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "items":
            return self._of(it.func.value, scope, seen)
        return []

    def _bound(self, name: str, scope: ast.FunctionDef, seen: frozenset[str]) -> list[ast.Constant]:
        if f"{scope.name}.{name}" in seen:
            return []
        seen = seen | {f"{scope.name}.{name}"}
        out: list[ast.Constant] = []
        for n in ast.walk(scope):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    if isinstance(t, ast.Name) and t.id == name:
                        out += self._of(n.value, scope, seen)
                    elif (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                          and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, str)):
                        out.append(t.slice)
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "update"
                  and isinstance(n.func.value, ast.Name) and n.func.value.id == name):
                out += [c for a in n.args for c in self._of(a, scope, seen)]
        return out


def suite_keys(tree: ast.Module, path: Path, problems: list[Problem] | None = None, exercise: str = "") -> SuiteKeys:
    """The registry and the named keys of a parsed hidden suite (see :class:`SuiteKeys`)."""
    keys = SuiteKeys()
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, expr = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, expr = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == REGISTRY:
            try:
                value = ast.literal_eval(expr)
            except ValueError:
                value = None
            if not (isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                    for k, v in value.items())):
                if problems is not None:
                    problems.append(Problem(path, stmt.lineno, f"{REGISTRY} must be a literal dict of key -> "
                                                               "sentence (strings)", exercise))
                continue
            keys.registry, keys.line = value, stmt.lineno
            keys.named.update(dict.fromkeys(value, stmt.lineno))
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "misconception":
            for c in _key_literals(node.value):
                key = str(c.value)
                keys.named.setdefault(key, c.lineno)
                if keys.registry is not None and key not in keys.registry and problems is not None:
                    problems.append(Problem(path, c.lineno, f"misconception key {key!r} is not in {REGISTRY} "
                                                            f"(line {keys.line}): register its sentence there",
                                            exercise))
    dict_keys = _DictKeys(tree)
    for key, line in dict_keys.keys(tree).items():  # the dict-keyed forms: each key a mutant must prove
        keys.named.setdefault(key, line)
    keys.written = dict_keys.sentences
    return keys


def read_suite_keys(path: Path) -> SuiteKeys:
    """:func:`suite_keys` of a suite file (empty when it cannot be read or parsed)."""
    try:
        return suite_keys(ast.parse(path.read_text(encoding="utf-8")), path)
    except (OSError, SyntaxError, UnicodeDecodeError):
        return SuiteKeys()


# ---------------------------------------------------------------------- the checks
@dataclass
class ExerciseFacts:
    """What the static pass learned about one exercise (used by the table and the mutant report)."""

    id: str
    public_tests: int = 0
    hidden_tests: int = 0
    alternatives: int = 0
    mutants: int = 0
    problems: list[Problem] = field(default_factory=list)
    contract: list[str] = field(default_factory=list)  # what students write that the hidden suite grades
    untouched: list[str] = field(default_factory=list)  # of those, what no public test calls (validate's row)
    rules: dict[str, list[str]] = field(default_factory=dict)  # each rule of the contract -> the tests checking it
    exempt: dict[str, str] = field(default_factory=dict)  # conventions that cannot apply here -> why

    def problem(self, path: Path, line: int | None, message: str) -> None:
        self.problems.append(Problem(path, line, message, self.id))


def lint_assignment(course: Path, assignment_id: str, only: list[str] | None = None) -> dict[str, ExerciseFacts]:
    """Every static check of one assignment; the ``""`` key holds assignment-level problems."""
    course = Path(course)
    cd = CourseDir(course)
    public, hidden = cd.public(assignment_id), cd.hidden(assignment_id)
    facts: dict[str, ExerciseFacts] = {"": ExerciseFacts("")}
    top = facts[""].problems
    meta_path = cd.assignment_toml(assignment_id)
    meta, found = read_assignment_toml(course, assignment_id)
    top += file_problems(found)
    if meta is None:
        return facts
    if str(meta.get("title", "")).startswith("TODO"):
        top.append(Problem(meta_path, toml_line(meta_path, "title"),
                           "the title is still the scaffold's TODO (it is the notebook's heading)"))
    ids = meta.get("exercises")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return facts
    top.extend(collisions(course, assignment_id, ids))
    seen = set()
    for i in ids:
        if i in seen:
            top.append(Problem(meta_path, toml_line(meta_path, "exercises"), f"lists {i!r} twice"))
        seen.add(i)
    if only is None:
        for d in sorted(p for p in public.iterdir() if p.is_dir()):
            lay = cd.exercise(assignment_id, d.name)
            if lay.toml.exists() and d.name not in seen:
                top.append(Problem(lay.toml, None,
                                   f"exercise {d.name!r} is not listed in {meta_path.name}: it would never be graded"))
        if hidden.is_dir():
            for d in sorted(p for p in hidden.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
                if d.name not in seen:
                    top.append(Problem(d, None, f"staff folder of {d.name!r}, which {meta_path.name} does not list"))
    for ex_id in ids:
        if only and ex_id not in only:
            continue
        lay = ExerciseLayout.of(course, assignment_id, ex_id)
        facts[ex_id] = lint_exercise(lay.public_dir, lay.hidden_dir, ex_id)
    defined = reference_names(course, assignment_id, ids)
    if defined is not None:
        for ex_id in ids:
            if ex_id in facts:
                lay = ExerciseLayout.of(course, assignment_id, ex_id)
                for path, line, name in undefined_student_names(lay, defined):
                    hint = closest_name(name, sorted(defined))
                    facts[ex_id].problem(path, line, (
                        f"the suite asks the student for `{name}`, which no reference of {assignment_id} defines"
                        f"{hint}: a staff error (a typo in the suite, or a name missing from the contract); "
                        "graded as it is, every student would be told to define it"))
    return facts


# ---------------------------------------------------------------------- names the suites ask students for
PROXY_OWN = {"call_detailed"}  # attributes of the ``student`` fixture itself, not names in the student's code


def closest_name(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def reference_names(course: Path, assignment_id: str, ids: list[str]) -> set[str] | None:
    """Every top-level name the assignment's references define (one namespace); None when one cannot be read."""
    out: set[str] = set()
    for ex_id in ids:
        ref = ExerciseLayout.of(course, assignment_id, ex_id).reference
        try:
            out |= set(defined_names(ast.parse(ref.read_text())))
        except (OSError, SyntaxError, ValueError):
            return None  # reported by the exercise's own checks; a guess here would only add noise
    return out


def student_names_asked(tree: ast.Module, *, probes: bool = False) -> list[tuple[int, str]]:
    """(line, name) of each name a suite (or probes.py) takes from the student's namespace.

    In a suite: ``student.NAME``, ``student.call_detailed("NAME", ...)`` and ``getattr(student, "NAME")``,
    where ``student`` is the fixture (by its name, in tests and helpers alike). In probes.py each public
    probe's first parameter is the student's module: ``mod.NAME``.
    """
    holders: dict[ast.AST, str] = {}
    if probes:
        for fn in tree.body:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and not fn.name.startswith("_") \
                    and fn.args.args:
                holders[fn] = fn.args.args[0].arg
    else:
        holders[tree] = "student"
    out = []
    for scope, holder in holders.items():
        for n in ast.walk(scope):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == holder \
                    and not n.attr.startswith("__") and (probes or n.attr not in PROXY_OWN):
                out.append((n.lineno, n.attr))
            elif isinstance(n, ast.Call) and n.args:
                f, literal = n.func, None
                if isinstance(f, ast.Attribute) and f.attr == "call_detailed" and not probes \
                        and isinstance(f.value, ast.Name) and f.value.id == holder:
                    literal = n.args[0]
                elif isinstance(f, ast.Name) and f.id == "getattr" and len(n.args) >= 2 \
                        and isinstance(n.args[0], ast.Name) and n.args[0].id == holder:
                    literal = n.args[1]  # hasattr() is left out: a suite may ask whether a name is absent
                if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                    out.append((n.lineno, literal.value))
    return sorted(set(out))


def undefined_student_names(lay: ExerciseLayout, defined: set[str]) -> list[tuple[Path, int, str]]:
    """Names the exercise's hidden suite or probes ask the student for that no reference defines."""
    out = []
    for path, probes in ((lay.hidden_tests, False), (lay.probes, True)):
        try:
            tree = ast.parse(path.read_text())
        except (OSError, SyntaxError, ValueError):
            continue  # a missing or broken file is reported on its own
        seen = set()
        for line, name in student_names_asked(tree, probes=probes):
            if name not in defined and name not in seen:
                seen.add(name)
                out.append((path, line, name))
    return out


def lint_exercise(pub: Path, hid: Path, ex_id: str) -> ExerciseFacts:
    """Every static check of one exercise: its exercise.toml, its files, its tests, its submission code."""
    f = ExerciseFacts(ex_id)
    lay = ExerciseLayout(pub, hid)
    if not ID_PATTERN.match(ex_id):
        f.problem(pub, None, "an exercise id must be lowercase letters, digits and underscores, starting with a letter")
    if not pub.is_dir():
        f.problem(pub, None, "missing (the assignment lists this exercise)")
        return f
    _check_toml(lay, f)
    trees = _check_files(lay, f)
    _check_tests(lay, trees, f)
    _check_submission_code(lay, trees, f)
    return f


def _check_toml(lay: ExerciseLayout, f: ExerciseFacts) -> None:
    """exercise.toml against the one schema (:data:`autograder.assignment.EXERCISE_KEYS`)."""
    meta, found = read_exercise_toml(lay, f.id)
    f.problems += file_problems(found, f.id)
    if meta is not None and str(meta.get("title", "")).startswith("TODO"):
        f.problem(lay.toml, toml_line(lay.toml, "title"), "the title is still the scaffold's TODO")


def _check_files(lay: ExerciseLayout, f: ExerciseFacts) -> dict[Path, ast.Module | None]:
    """Every file in place; the statement not empty; alternatives and mutants present. Returns the parsed files."""
    for p in lay.required:
        if not p.is_file():
            f.problem(p, None, "missing (every exercise needs it; `torchgrader new` scaffolds it)")
    if lay.statement.is_file() and not lay.statement.read_text(errors="replace").strip():
        f.problem(lay.statement, None, "is empty")
    elif lay.statement.is_file() and lay.statement.read_text(errors="replace").lstrip().startswith("#"):
        f.problem(lay.statement, 1, f"starts with a heading: the title lives in {lay.toml.name} only, and the notebook "
                                    "writes the heading from it (`## N. Title (`id`)`); drop this line")
    alternatives, mutants = lay.alternatives(), lay.mutants()
    f.alternatives, f.mutants = len(alternatives), len(mutants)
    if not alternatives:
        f.problem(lay.alternatives_dir, None, "no correct alternative (*.py): add one written differently from the "
                                              "reference, to show the suite does not grade one way of writing it")
    if not mutants:
        f.problem(lay.mutants_dir, None, "no mutants (*.py): without known-wrong implementations nothing shows "
                                         "that the hidden tests catch anything")
    for path in [*alternatives, *mutants]:
        if path.stem.startswith("TODO"):
            f.problem(path, None, "still has the scaffold's name: rename it after what it does")
    trees: dict[Path, ast.Module | None] = {}
    for p in [*lay.required, lay.probes, *alternatives, *mutants]:
        if p.is_file() and p != lay.statement:
            trees[p] = parse_file(p, f.problems, f.id)
    return trees


def _check_tests(lay: ExerciseLayout, trees: dict[Path, ast.Module | None], f: ExerciseFacts) -> None:
    """Docstrings (the names students see), points on hidden tests, asserts with messages, no public copies."""
    public_bodies: dict[str, tuple[str, int]] = {}
    for path, is_hidden in ((lay.public_tests, False), (lay.hidden_tests, True)):
        tree = trees.get(path)
        if tree is None:
            continue
        fns = find_tests(tree)
        if not fns:
            f.problem(path, None, "defines no test (functions named test_...)")
        if is_hidden:
            f.hidden_tests = len(fns)
        else:
            f.public_tests = len(fns)
        for fn, outer in fns:
            doc = ast.get_docstring(fn)
            if not doc or not doc.strip().splitlines()[0].strip():
                f.problem(path, fn.lineno, f"{fn.name} has no docstring: its first line is the test name students see")
            has_points, value = points_mark(fn, outer)
            if is_hidden:
                if not has_points:
                    f.problem(path, fn.lineno, f"{fn.name} has no @pytest.mark.points(n)")
                elif _has_mark(fn, outer, "in_process"):
                    if value != 0:
                        f.problem(path, fn.lineno, f"{fn.name} is in_process (advice on a fact only the student's "
                                                   f"process reports) and must be worth 0 points, not {value}")
                elif value is not None and value <= 0:
                    f.problem(path, fn.lineno, f"{fn.name} is worth {value:g} points: a hidden test must be worth "
                                               "some (only an in_process advice test is worth 0)")
                dump = body_dump(fn.body)
                if dump in public_bodies:
                    name, line = public_bodies[dump]
                    f.problem(path, fn.lineno, f"{fn.name} is identical to the public test {name} "
                                               f"({lay.public_tests.name}:{line}): a hidden test must check something "
                                               "else")
            else:
                public_bodies.setdefault(body_dump(fn.body), (fn.name, fn.lineno))
        if is_hidden:
            suite_keys(tree, path, f.problems, f.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and node.msg is None:
                f.problem(path, node.lineno, "`assert` without a message: the message is all a student sees; write "
                                             "`assert cond, \"what was expected\"` or use check()/assert_close()")
        for line in nan_passing_comparisons(tree):
            f.problem(path, line, "`if abs(a - b) > tol:` before a failure lets a NaN through (NaN > tol is False): "
                                  "write `if not abs(a - b) <= tol:`, or use within()/assert_close()")


def _calls_abs(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and ((isinstance(n.func, ast.Name) and n.func.id == "abs")
                                            or (isinstance(n.func, ast.Attribute) and n.func.attr == "abs"))
               for n in ast.walk(node))


def _fails(body: list[ast.stmt]) -> bool:
    """The branch fails the test: it raises, or calls fail() or a helper that judges (``_judge_*``)."""
    def failing(n: ast.AST) -> bool:
        if isinstance(n, ast.Raise):
            return True
        name = n.func.id if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) else ""
        return "fail" in name or "judge" in name
    return any(failing(n) for stmt in body for n in ast.walk(stmt))


def nan_passing_comparisons(tree: ast.Module) -> list[int]:
    """Lines of ``if abs(...) > tol:`` (or ``>=``) whose branch fails the test: a NaN skips that branch.

    Any comparison a NaN passes is a defect (issue 22); validate's NaN-returning mutant finds
    the rest at run time.
    """
    out = []
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        if (isinstance(node, ast.If) and isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Gt | ast.GtE) and _calls_abs(test.left) and _fails(node.body)):
            out.append(node.lineno)
    return out


def _check_submission_code(lay: ExerciseLayout, trees: dict[Path, ast.Module | None], f: ExerciseFacts) -> None:
    """The stub leaves work to do; the reference and alternatives define the contract; each case differs."""
    stub, reference = trees.get(lay.stub), trees.get(lay.reference)
    alternatives, mutants = lay.alternatives(), lay.mutants()
    if stub is not None:
        if not contract_names(stub):
            f.problem(lay.stub, None, "leaves nothing for students to write (no `raise NotImplementedError`)")
        used: set[str] = set()
        for p in (lay.public_tests, lay.hidden_tests, lay.probes):
            tree = trees.get(p)
            if tree is not None:
                used |= names_mentioned(tree)
        names = contract_names(stub, used)
        f.contract = list(names)
        f.untouched = untouched_by_public(trees.get(lay.public_tests), reference, names)
        for path in [lay.reference, *alternatives]:
            tree = trees.get(path)
            if tree is None:
                continue
            have = defined_names(tree)
            for name, line in names.items():
                if name not in have:
                    f.problem(path, None, f"does not define `{name}` ({lay.stub.name}:{line} declares it)")
    hidden_tree = trees.get(lay.hidden_tests)
    if hidden_tree is not None:
        known = probe_defs(trees.get(lay.probes)) if lay.probes.is_file() else set()
        for line, name in literal_probe_calls(hidden_tree):
            if name not in known:
                close = difflib.get_close_matches(name, sorted(known), n=1)
                f.problem(lay.hidden_tests, line, f"probe {name!r} does not exist" + (
                    (f" in {lay.probes.name}" + (f" (did you mean {close[0]!r}?)" if close else "")
                     + f"; the probes are: {', '.join(sorted(known))}") if known
                    else f": this exercise has no {lay.probes.name} defining it"))
    ref_dump = module_dump(reference) if reference is not None else None
    for path in alternatives:
        tree = trees.get(path)
        if tree is not None and ref_dump is not None and module_dump(tree) == ref_dump:
            f.problem(path, None, "is the reference itself: an alternative must be written differently")
    for path in mutants:
        tree = trees.get(path)
        if tree is None:
            continue
        doc = ast.get_docstring(tree)
        if not doc or not doc.strip():
            f.problem(path, 1, "a mutant needs a module docstring naming the misconception it encodes")
        elif doc.strip().startswith("TODO"):
            f.problem(path, 1, "its docstring is still the scaffold's TODO: name the misconception it encodes")
        for where, message in header_problems(path, path.read_text(encoding="utf-8")):
            f.problem(path, where, message)
        text = path.read_text(encoding="utf-8")
        if is_change(text):
            _check_change(lay, path, text, ref_dump, f)
        elif ref_dump is not None and module_dump(tree) == ref_dump:
            f.problem(path, None, "is the reference itself: a mutant must encode a misconception")
        elif reference is not None and not is_whole_file(text):
            ref_defs, mine = top_level_defs(reference), top_level_defs(tree)
            if mine and all(ref_defs.get(n) == d for n, d in mine.items()) and not [
                    n for n in _strip_docstring(tree.body)
                    if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Import
                                      | ast.ImportFrom)]:
                f.problem(path, None, f"changes nothing: {', '.join(f'`{n}`' for n in mine)} "
                                      f"{'is' if len(mine) == 1 else 'are'} the reference's own; edit the copy to "
                                      "encode the misconception")


def _check_change(lay: ExerciseLayout, path: Path, text: str, ref_dump: str | None, f: ExerciseFacts) -> None:
    """A change mutant applies to its reference, the code it stands for parses, and it changes something."""
    try:
        code = applied(path, lay.reference, text)
    except ChangeMismatch as e:
        f.problem(e.path, e.line, e.detail)
        return
    try:
        tree = ast.parse(code)
    except SyntaxError as e:
        f.problem(path, None, f"its change leaves {lay.reference.name} unparseable (line {e.lineno} of the changed "
                              f"code: {e.msg}); fix the `+` lines")
        return
    if ref_dump is not None and module_dump(tree) == ref_dump:
        f.problem(path, None, "changes nothing the code does (its CHANGE only keeps, or reformats, the reference's "
                              "lines): mark the lines to change with `-` and write the mistake on `+` lines")


def mutant_code(path: Path, reference: Path) -> str:
    """The code a mutant file holds for analysis: a change applied to its reference, or the file as written."""
    text = path.read_text(encoding="utf-8")
    return applied(path, reference, text) if is_change(text) else text


def untouched_by_public(public: ast.Module | None, reference: ast.Module | None, names: dict[str, int]) -> list[str]:
    """The contract's functions and classes no public test reaches, directly or through the reference's calls.

    A public test that never calls a function cannot catch any value of it: a student whose function is
    wrong sees every public test pass and learns it only from the grade.
    """
    if public is None:
        return list(names)
    helpers = {n.name: names_mentioned(n) for n in public.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    calls = {n.name: names_mentioned(n) for n in (reference.body if reference is not None else [])
             if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    reached: set[str] = set()
    for fn, _ in find_tests(public):
        reached |= _closure(_closure(names_mentioned(fn), helpers), calls)
    return [n for n in names if n not in reached]


# ---------------------------------------------------------------------- one namespace: names across exercises
def collisions(course: Path, assignment_id: str, ids: list[str]) -> list[Problem]:
    """Names two exercises both define: a submission is every exercise's code in one namespace.

    The later definition silently replaces the earlier one, so the earlier
    exercise breaks (for every student and for its own reference). Checked:
    each stub's top-level functions and classes (the contract), and each
    reference's, against every other exercise's.
    """
    owners: dict[str, list[tuple[str, Path, int]]] = {}
    for ex_id in ids:
        lay = ExerciseLayout.of(course, assignment_id, ex_id)
        for path in (lay.stub, lay.reference):
            if not path.is_file():
                continue
            try:
                tree = ast.parse(path.read_text())
            except (SyntaxError, UnicodeDecodeError):
                continue  # reported by the exercise's own checks
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    owners.setdefault(node.name, []).append((ex_id, path, node.lineno))
    out = []
    for name, entries in owners.items():
        exercises = list(dict.fromkeys(e for e, _, _ in entries))
        if len(exercises) < 2:
            continue
        first_ex, later = exercises[0], exercises[-1]
        where = "; ".join(f"{p.parent.name}/{p.name}:{ln}" for _, p, ln in entries)
        stubs = [(e, p, ln) for e, p, ln in entries if p.name == STUB]
        at = next(((p, ln) for e, p, ln in reversed(stubs) if e == later), None) or \
            next((p, ln) for e, p, ln in reversed(entries) if e == later)
        out.append(Problem(at[0], at[1],
                           f"`{name}` is defined by {len(exercises)} exercises ({where}): a submission is every "
                           f"exercise's code in one namespace, so {later}'s definition replaces {first_ex}'s and "
                           f"breaks {first_ex}. Give each exercise its own names (rename one of them).", later))
    return out


def probe_defs(tree: ast.Module | None) -> set[str]:
    """The probes a probes.py defines: its public top-level functions."""
    if tree is None:
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
            and not n.name.startswith("_")}


def literal_probe_calls(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, name) of every ``<anything>.probe("name", ...)`` call with a literal name."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "probe" and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            out.append((n.lineno, n.args[0].value))
    return sorted(out)




# ---------------------------------------------------------------------- collection (points as pytest sees them)
@dataclass
class CollectedTest:
    exercise: str
    nodeid: str
    name: str
    points: float | None  # None: no points mark
    path: Path
    line: int
    rules: tuple[str, ...] | None = None  # @pytest.mark.rules(...); None: no mark


class _Collector:
    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment
        self.tests: list[CollectedTest] = []
        self.problems: list[Problem] = []

    def pytest_configure(self, config: pytest.Config) -> None:
        collect.register_markers(config)

    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        for item in items:
            path, line = Path(str(item.path)), collect.test_line(item)
            problem = collect.classify(item, self.assignment)
            if problem is not None:
                self.problems.append(Problem(path, line, problem))
            ex = item.stash.get(collect.EXERCISE, None)
            self.tests.append(CollectedTest(ex.id if ex else "", item.nodeid, collect.test_name(item),
                                            item.stash[collect.POINTS], path, line, collect.rules(item)))

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            path = Path(report.fspath) if report.fspath else Path(report.nodeid)
            text = report.longreprtext
            m = re.findall(rf"{re.escape(path.name)}:(\d+)", text)
            self.problems.append(Problem(path, int(m[-1]) if m else None,
                                         "could not be collected:\n" + "\n".join(text.splitlines()[-12:])))


def collect_suites(assignment: Assignment, *, public: bool) -> tuple[list[CollectedTest], list[Problem]]:
    """Collect the hidden (or public) suites as grading does, without running a test."""
    files = assignment.suite_files(public=public)
    collector = _Collector(assignment)
    if not files:
        return [], []
    collect.invoke_pytest(files, assignment.course, [collector], collect_only=True)
    return collector.tests, collector.problems


def lint_points(assignment: Assignment) -> tuple[dict[str, list[CollectedTest]], list[Problem]]:
    """Hidden points per exercise as pytest collects them, against exercise.toml."""
    tests, problems = collect_suites(assignment, public=False)
    by_ex: dict[str, list[CollectedTest]] = {e.id: [] for e in assignment.exercises}
    for t in tests:
        by_ex.setdefault(t.exercise, []).append(t)
    for ex in assignment.exercises:
        mine = by_ex.get(ex.id, [])
        for t in mine:
            if t.points is None:
                problems.append(Problem(t.path, t.line, f"{t.nodeid.split('::')[-1]} has no @pytest.mark.points(n)",
                                        ex.id))
        total = sum(t.points or 0.0 for t in mine)
        if mine and abs(total - ex.points) > 1e-9:
            toml = ex.toml
            problems.append(Problem(toml, toml_line(toml, "points"),
                                    f"declares {ex.points:g} points but the hidden tests add up to {total:g} "
                                    f"({len(mine)} tests)", ex.id))
    return by_ex, problems


# ---------------------------------------------------------------------- what a surviving mutant slipped past
def names_mentioned(node: ast.AST, *, bare_names: bool = True) -> set[str]:
    """Attribute names and identifier-like string constants under ``node`` (``student.f``, ``probe("p")``),
    and with ``bare_names`` the plain names it reads or binds too."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.isidentifier():
            out.add(n.value)
        elif bare_names and isinstance(n, ast.Name):
            out.add(n.id)
    return out


def _closure(start: set[str], functions: dict[str, set[str]]) -> set[str]:
    """Names reachable through module-level helper functions (tests call helpers that call the student)."""
    seen = set(start)
    todo = [n for n in start if n in functions]
    while todo:
        name = todo.pop()
        for m in functions.get(name, ()):
            if m not in seen:
                seen.add(m)
                if m in functions:
                    todo.append(m)
    return seen


def changed_names(reference: Path, mutant: Path) -> list[str]:
    """Top-level functions and classes the mutant defines differently from the reference."""
    try:
        ref = top_level_defs(ast.parse(reference.read_text()))
        mut = top_level_defs(ast.parse(mutant_code(mutant, reference)))
    except (OSError, SyntaxError, ChangeMismatch):
        return []
    return [n for n, d in mut.items() if ref.get(n) != d] + [n for n in ref if n not in mut]


def hidden_tests_calling(hidden_tests: Path, probes: Path, names: list[str]) -> list[tuple[str, int]]:
    """Hidden tests (name, line) whose code, helpers or probes mention one of ``names``."""
    try:
        tree = ast.parse(hidden_tests.read_text())
    except (OSError, SyntaxError):
        return []
    helpers = {n.name: names_mentioned(n) for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    probe_uses: dict[str, set[str]] = {}
    if probes.is_file():
        try:
            ptree = ast.parse(probes.read_text())
            probe_fns = {n.name: names_mentioned(n) for n in ptree.body if isinstance(n, ast.FunctionDef)}
            probe_uses = {n: _closure(u, probe_fns) for n, u in probe_fns.items()}
        except SyntaxError:
            pass
    wanted = set(names)
    out = []
    for fn, _ in find_tests(tree):
        used = _closure(names_mentioned(fn), helpers)
        for p in list(used):
            used |= probe_uses.get(p, set())
        if used & wanted:
            out.append((fn.name, fn.lineno))
    return out
