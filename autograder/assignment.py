"""The one loader of the course's files: where each lives, what its TOML may say, and the loaded assignment.

An exercise is a folder pair: ``assignments/<a>/<ex>/`` (what students get)
and ``solutions/<a>/<ex>/`` (staff-only). Every other module asks this one
(:class:`CourseDir`, :class:`ExerciseLayout`, :func:`load_assignment`), as
every nbgrader app asks its ``coursedir``: no other module spells a course
file's name or parses its TOML (``tests/test_exercise_schema.py`` holds that).
Both TOML files are checked against their schema here (:data:`ASSIGNMENT_KEYS`,
:data:`EXERCISE_KEYS`), for loading and for the linter alike. Mistakes in the
material are reported at load time with the file that has them, before
anything runs.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from autograder.errors import AssignmentError
from autograder.errors import SuiteProblems as SuiteProblems

# ---------------------------------------------------------------------- the exercise layout
# The one place that says which file of an exercise is which. Everything else
# (lint, scaffold, release, Gradescope export, the store's suite version, the
# judge's collection) asks an :class:`ExerciseLayout` (or a :class:`CourseDir`) instead of spelling names.
PUBLIC_SIDE = "assignments"  # what students get, under the course folder
HIDDEN_SIDE = "solutions"  # staff-only, never mounted into a sandbox
ASSIGNMENT_TOML = "assignment.toml"
EXERCISE_TOML = "exercise.toml"
STATEMENT = "statement.md"
STUB = "stub.py"
PUBLIC_TESTS = "public_test.py"
DATA_DIR = "data"  # optional public data files, shipped next to the notebook
REFERENCE = "reference.py"
HIDDEN_TESTS = "test_hidden.py"
PROBES = "probes.py"
ALTERNATIVES_DIR = "alternatives"
MUTANTS_DIR = "mutants"
FORGERIES_DIR = "forgeries"  # an honest mistake with an advice test's evidence forged (authoring/forgery.py)
MUTATION_RECORD = "mutation.toml"  # the mutation analysis of the reference: its score and explained survivors

SUITE_NAMES = (HIDDEN_TESTS, PUBLIC_TESTS)  # an exercise's two suites
_SUITE_STEMS = frozenset(Path(n).stem for n in SUITE_NAMES)  # asked of every loaded module, twice per judge
PUBLIC_FILES = (EXERCISE_TOML, STATEMENT, PUBLIC_TESTS)  # shipped as files (the stub goes into the notebook)
STAFF_FILES = (REFERENCE, HIDDEN_TESTS, PROBES, MUTATION_RECORD)  # never shipped to students
STAFF_DIRS = (ALTERNATIVES_DIR, MUTANTS_DIR, FORGERIES_DIR)  # never shipped anywhere, Gradescope included
SUITE_FILE_PATTERNS = ("test_*.py", PUBLIC_TESTS)  # how pytest finds the hidden and public suites
# staff-only files grading never reads: workers elsewhere never get them
NOT_FOR_GRADING = (REFERENCE, MUTATION_RECORD, *STAFF_DIRS)
CACHE_PARTS = ("__pycache__",)  # with every dot-named file or folder (.ipynb_checkpoints, .git): never material


def material_files(course: Path, assignment_id: str, *, grading_only: bool = False) -> list[tuple[Path, str, Path]]:
    """Every file of an assignment as ``(file, side, path inside side/<id>/)``, sorted: ``side`` is
    ``assignments`` or ``solutions``. Caches, dot-files and symlinks are never material; with
    ``grading_only``, neither are the references, alternatives and mutants.

    The one answer to "which files make up this assignment", for the validate stamp's digest, the
    material shipped to workers elsewhere, and the Gradescope autograder.
    """
    out: list[tuple[Path, str, Path]] = []
    for side in (PUBLIC_SIDE, HIDDEN_SIDE):
        top = Path(course) / side / assignment_id
        if not top.is_dir():
            continue
        for p in sorted(top.rglob("*")):
            rel = p.relative_to(top)
            if not is_material(rel, staff=not (grading_only and side == HIDDEN_SIDE)) or p.is_symlink():
                continue
            if p.is_file():
                out.append((p, side, rel))
    return out


def is_material(rel: Path, *, staff: bool = True) -> bool:
    """Whether a path inside an assignment's folder is material (``staff``: references and mutants count)."""
    parts = Path(rel).parts
    if any(x in CACHE_PARTS or x.startswith(".") for x in parts) or Path(rel).suffix == ".pyc":
        return False
    return staff or not any(x in NOT_FOR_GRADING for x in parts)


class _In:
    """A path of :class:`ExerciseLayout`: ``name`` inside the exercise's public folder, or its hidden one."""

    def __init__(self, name: str, *, hidden: bool = False) -> None:
        self.name, self.hidden = name, hidden

    @overload
    def __get__(self, layout: None, owner: type | None = None) -> _In: ...
    @overload
    def __get__(self, layout: ExerciseLayout, owner: type | None = None) -> Path: ...
    def __get__(self, layout: ExerciseLayout | None, owner: type | None = None) -> Path | _In:
        if layout is None:
            return self  # looked up on the class
        return (layout.hidden_dir if self.hidden else layout.public_dir) / self.name


@dataclass
class ExerciseLayout:
    """Where one exercise's files live: ``public_dir`` goes to students, ``hidden_dir`` never does."""

    public_dir: Path
    hidden_dir: Path

    @classmethod
    def of(cls, course: Path, assignment_id: str, exercise_id: str) -> ExerciseLayout:
        return cls(Path(course) / PUBLIC_SIDE / assignment_id / exercise_id,
                   Path(course) / HIDDEN_SIDE / assignment_id / exercise_id)

    # each file and folder, by name, in the public folder (students get it) or in the hidden one
    toml = _In(EXERCISE_TOML)
    statement = _In(STATEMENT)
    stub = _In(STUB)
    public_tests = _In(PUBLIC_TESTS)
    data_dir = _In(DATA_DIR)
    reference = _In(REFERENCE, hidden=True)
    hidden_tests = _In(HIDDEN_TESTS, hidden=True)
    probes = _In(PROBES, hidden=True)
    alternatives_dir = _In(ALTERNATIVES_DIR, hidden=True)
    mutants_dir = _In(MUTANTS_DIR, hidden=True)
    forgeries_dir = _In(FORGERIES_DIR, hidden=True)
    mutation_record = _In(MUTATION_RECORD, hidden=True)

    @property
    def required(self) -> list[Path]:
        """The files every exercise must have (probes, alternatives and mutants are checked apart)."""
        return [self.statement, self.stub, self.public_tests, self.reference, self.hidden_tests]

    def alternatives(self) -> list[Path]:
        return sorted(self.alternatives_dir.glob("*.py"))

    def mutants(self) -> list[Path]:
        return sorted(self.mutants_dir.glob("*.py"))

    def forgeries(self) -> list[Path]:
        return sorted(self.forgeries_dir.glob("*.py"))


# ---------------------------------------------------------------------- the course folder
@dataclass(frozen=True)
class CourseDir:
    """The course folder (``assignments/`` beside ``solutions/``): where each assignment's files are.

    nbgrader's ``CourseDirectory`` in small: one object knows the folder structure, and every command
    asks it for a path instead of joining names itself.
    """

    root: Path

    def public(self, assignment_id: str = "") -> Path:
        """``assignments/<id>/``: what students get (``assignments/`` itself without an id)."""
        return Path(self.root) / PUBLIC_SIDE / assignment_id

    def hidden(self, assignment_id: str = "") -> Path:
        """``solutions/<id>/``: staff-only (``solutions/`` itself without an id)."""
        return Path(self.root) / HIDDEN_SIDE / assignment_id

    def assignment_toml(self, assignment_id: str) -> Path:
        return self.public(assignment_id) / ASSIGNMENT_TOML

    def exercise(self, assignment_id: str, exercise_id: str) -> ExerciseLayout:
        return ExerciseLayout.of(Path(self.root), assignment_id, exercise_id)

    def exists(self) -> bool:
        """Whether this folder holds a course (an ``assignments/`` folder; a student's bundle has no solutions)."""
        return self.public().is_dir()

    def assignment_ids(self) -> list[str]:
        """The assignments the course has: folders of ``assignments/`` with an ``assignment.toml``, sorted."""
        top = self.public()
        return sorted(d.name for d in top.iterdir() if (d / ASSIGNMENT_TOML).is_file()) if top.is_dir() else []

    def listed_exercises(self, assignment_id: str) -> list[str] | None:
        """The exercise ids ``assignment.toml`` lists, read leniently ([] when it lists none properly);
        None when the file cannot be read as TOML. For callers that must not fail (the validate stamp,
        the student's guess of their assignment); :func:`load_assignment` is the strict read."""
        meta, _ = read_toml(self.assignment_toml(assignment_id))
        if meta is None:
            return None
        ids = meta.get("exercises")
        return [str(i) for i in ids] if isinstance(ids, list) else []


def suite_owner(path: Path) -> tuple[Path, str, str] | None:
    """(course, assignment id, exercise id) of an exercise's hidden or public suite file, else None."""
    path = Path(path).resolve()
    if path.name not in SUITE_NAMES or len(path.parents) < 4:
        return None
    side = path.parents[2]
    if side.name not in (HIDDEN_SIDE, PUBLIC_SIDE):
        return None
    if not CourseDir(side.parent).assignment_toml(path.parents[1].name).is_file():
        return None
    return side.parent, path.parents[1].name, path.parent.name


def is_suite_module(module: str) -> bool:
    """Whether a dotted module name is a course suite's, as pytest's importlib mode names it after its path
    under the course (``solutions.demo.basics.test_hidden``), or bare (``test_hidden``)."""
    return module.split(".", 1)[0] in (HIDDEN_SIDE, PUBLIC_SIDE) or module.rsplit(".", 1)[-1] in _SUITE_STEMS


# ---------------------------------------------------------------------- reading TOML
@dataclass(frozen=True)
class FileProblem:
    """One mistake in a course file: the file, the line when it is known, what is wrong."""

    path: Path
    line: int | None
    message: str


def read_toml(path: Path) -> tuple[dict | None, FileProblem | None]:
    """A TOML file's table, or None and what is wrong with the file (missing, unreadable, not TOML, with its line)."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f), None
    except FileNotFoundError:
        return None, FileProblem(Path(path), None, "missing")
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"at line (\d+)", str(e))
        return None, FileProblem(Path(path), int(m.group(1)) if m else None, f"not valid TOML: {e}")
    except OSError as e:
        return None, FileProblem(Path(path), None, f"cannot be read ({e.strerror})")


def toml_line(path: Path, key: str) -> int | None:
    """The line where a top-level ``key = ...`` is written, for messages that point at it."""
    try:
        for i, ln in enumerate(Path(path).read_text().splitlines(), start=1):
            if re.match(rf"^\s*{re.escape(key)}\s*=", ln):
                return i
    except OSError:
        return None
    return None


# ---------------------------------------------------------------------- the two schemas
@dataclass(frozen=True)
class Key:
    """One key of a course TOML file: its type, whether it must be there, and its default when it need not."""

    kind: type | tuple[type, ...]
    required: bool
    default: object = None
    positive: bool = False
    doc: str = ""


ASSIGNMENT_KEYS: dict[str, Key] = {
    "id": Key(str, False, doc="the assignment id; must equal its folder's name"),
    "title": Key(str, False, doc="the notebook's heading (the id when it is left out)"),
    "exercises": Key(list, False, doc="the exercise ids, in the notebook's and the gradebook's order (required)"),
    "conventions": Key(dict, False, default={},
                       doc="rule id -> the contract's sentence, for the conventions every exercise follows (inputs "
                           "left unmodified, global settings left as found); each exercise's hidden suite checks "
                           "each one (`@pytest.mark.rules`), unless its `conventions_exempt` says why it cannot"),
}

EXERCISE_KEYS: dict[str, Key] = {
    "id": Key(str, False, doc="the exercise id; must equal its folder's name"),
    "title": Key(str, True, doc="the title students and staff see"),
    "points": Key((int, float), True, positive=True, doc="must equal the sum of the hidden tests' points"),
    "timeout": Key((int, float), True, positive=True, doc="seconds per test (wall clock)"),
    "gpu": Key(bool, False, default=False, doc="graded on CUDA when available, CPU fallback otherwise"),
    "warm_dynamo": Key(bool, False, default=False,
                       doc="its suites or probes compile or build an optimizer: torch._dynamo is imported ahead "
                           "(autograder.warmup; only a speed hint)"),
    "rules": Key(dict, False, default={},
                 doc="rule id -> the contract's sentence, one per rule of this exercise's section; each is checked "
                     "by at least one hidden test that declares it (`@pytest.mark.rules(\"id\")`; validate's "
                     "coverage row)"),
    "conventions_exempt": Key(dict, False, default={},
                              doc="convention id -> why it cannot apply to this exercise (e.g. no function takes a "
                                  "tensor, a module or an optimizer)"),
}

RULE_ID = re.compile(r"[a-z][a-z0-9_]*\Z")  # a rule's id: what `@pytest.mark.rules(...)` names


def _rule_table_problems(meta: dict, keys: tuple[str, ...]) -> list[tuple[str | None, str]]:
    """Each rule table maps an id (lower_snake_case) to a non-empty sentence."""
    out: list[tuple[str | None, str]] = []
    for key in keys:
        table = meta.get(key)
        if not isinstance(table, dict):
            continue
        for rid, text in table.items():
            if not RULE_ID.match(rid):
                out.append((key, f"`{key}` id {rid!r} is not lower_snake_case (letters, digits, _)"))
            if not isinstance(text, str) or not text.strip():
                out.append((key, f"`{key}.{rid}` must be a non-empty string"))
    return out


def _schema_problems(meta: dict, folder: str, keys: dict[str, Key]) -> list[tuple[str | None, str]]:
    out = _key_problems(meta, keys)
    if meta.get("id", folder) != folder:
        out.append(("id", f"id {meta.get('id')!r} does not match its folder {folder!r}"))
    return out


def _key_problems(meta: dict, keys: dict[str, Key]) -> list[tuple[str | None, str]]:
    """Every key of ``meta`` that ``keys`` does not know or whose value has the wrong type; every one missing."""
    out: list[tuple[str | None, str]] = []
    for key, value in meta.items():
        spec = keys.get(key)
        if spec is None:
            out.append((key, f"unknown key {key!r} (known: {', '.join(keys)})"))
        elif not isinstance(value, spec.kind) or (spec.kind is not bool and isinstance(value, bool)):
            out.append((key, f"`{key}` has the wrong type ({type(value).__name__})"))
        elif spec.positive and isinstance(value, int | float) and value <= 0:
            out.append((key, f"`{key}` must be positive"))
    out += [(None, f"`{key}` is missing") for key, spec in keys.items() if spec.required and key not in meta]
    return out


def exercise_toml_problems(meta: dict, folder: str) -> list[tuple[str | None, str]]:
    """Every way an exercise.toml's ``meta`` breaks the schema, as (key or None, message); empty when sound."""
    out = _schema_problems(meta, folder, EXERCISE_KEYS) + _rule_table_problems(meta, ("rules", "conventions_exempt"))
    for rid in set(meta.get("rules") or {}) & set(meta.get("conventions_exempt") or {}):
        out.append(("rules", f"{rid!r} is both a rule of the exercise and an exempt convention"))
    return out


def assignment_toml_problems(meta: dict, folder: str) -> list[tuple[str | None, str]]:
    """Every way an assignment.toml's ``meta`` breaks the schema, as (key or None, message); empty when sound."""
    out = _schema_problems(meta, folder, ASSIGNMENT_KEYS)
    ids = meta.get("exercises")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        out.append(("exercises", "`exercises` must be a list of exercise ids"))
    return out + _rule_table_problems(meta, ("conventions",))


def _checked(path: Path, folder: str, problems_of: Callable[[dict, str], list[tuple[str | None, str]]]
             ) -> tuple[dict | None, list[FileProblem]]:
    meta, unreadable = read_toml(path)
    if meta is None:
        return None, [unreadable] if unreadable else []
    return meta, [FileProblem(Path(path), toml_line(path, key) if key else None, message)
                  for key, message in problems_of(meta, folder)]


def read_assignment_toml(course: Path, assignment_id: str) -> tuple[dict | None, list[FileProblem]]:
    """The assignment's ``assignment.toml`` and every way it breaks its schema (each with its line)."""
    return _checked(CourseDir(Path(course)).assignment_toml(assignment_id), assignment_id, assignment_toml_problems)


def read_exercise_toml(layout: ExerciseLayout, exercise_id: str) -> tuple[dict | None, list[FileProblem]]:
    """The exercise's ``exercise.toml`` and every way it breaks its schema (each with its line)."""
    return _checked(layout.toml, exercise_id, exercise_toml_problems)


# ---------------------------------------------------------------------- the mutation record
MUTATION_KEYS: dict[str, Key] = {
    "reference": Key(str, True, doc="sha256 of reference.py as analysed: another reference makes the record stale"),
    "suite": Key(str, False, doc="sha256 of test_hidden.py as graded (for people: a suite may grow since)"),
    "tool": Key(str, False, doc="what generated the mutants"),
    "generated": Key(int, True, doc="mutants graded"),
    "killed": Key(int, True, doc="mutants that lost points on the hidden suite"),
    "seconds": Key((int, float), False, doc="grading time of its mutants, added up over the workers"),
    "survivor": Key(list, False, doc="each mutant that earned full marks ([[survivor]] tables)"),
}
SURVIVOR_KEYS: dict[str, Key] = {
    "id": Key(str, True, doc="function/operator/digest, as `torchgrader mutate` prints it"),
    "operator": Key(str, True, doc="the operator that made it"),
    "function": Key(str, False, doc="the function it changes"),
    "change": Key(str, True, doc="its change to reference.py (diff -U0 hunks, as a change mutant's CHANGE)"),
    "status": Key(str, True, doc='"equivalent" (with a reason) or "open" (not yet caught nor explained)'),
    "reason": Key(str, False, default="", doc="one line: why no test can tell it from the reference"),
}


@dataclass(frozen=True)
class Survivor:
    """A mechanical mutant the hidden suite did not catch, as recorded (``[[survivor]]``)."""

    id: str
    operator: str
    function: str
    change: str
    status: str
    reason: str = ""


@dataclass(frozen=True)
class MutationRecord:
    """An exercise's ``mutation.toml``: the analysis of its reference and the survivors, each explained."""

    reference: str
    generated: int
    killed: int
    survivors: list[Survivor]
    suite: str = ""
    tool: str = ""
    seconds: float = 0.0


def read_mutation_record(layout: ExerciseLayout) -> tuple[MutationRecord | None, list[FileProblem]]:
    """The exercise's mutation record and every way it breaks :data:`MUTATION_KEYS`; (None, [missing]) when
    there is none."""
    path = layout.mutation_record
    meta, unreadable = read_toml(path)
    if meta is None:
        return None, [unreadable] if unreadable else []
    problems = [FileProblem(path, toml_line(path, k) if k else None, m)
                for k, m in _key_problems(meta, MUTATION_KEYS)]
    survivors = []
    for i, t in enumerate(meta.get("survivor", []) if isinstance(meta.get("survivor"), list) else []):
        bad = [m for _, m in _key_problems(t, SURVIVOR_KEYS)] if isinstance(t, dict) else ["not a table"]
        if bad:
            problems.append(FileProblem(path, None, f"survivor {i + 1}: " + "; ".join(bad)))
            continue
        survivors.append(Survivor(t["id"], t["operator"], t.get("function", ""), t["change"], t["status"],
                                  t.get("reason", "")))
    if problems:
        return None, problems
    return MutationRecord(meta["reference"], meta["generated"], meta["killed"], survivors, meta.get("suite", ""),
                          meta.get("tool", ""), float(meta.get("seconds", 0.0))), []


@dataclass
class Exercise(ExerciseLayout):
    """An exercise as exercise.toml declares it, with its files (:class:`ExerciseLayout`)."""

    id: str = ""
    title: str = ""
    points: float = 0.0
    timeout: float = 10.0
    gpu: bool = False
    warm_dynamo: bool = False
    rules: dict[str, str] = field(default_factory=dict)  # this exercise's rules of the contract: id -> sentence
    conventions_exempt: dict[str, str] = field(default_factory=dict)  # convention id -> why it cannot apply


@dataclass
class Assignment:
    id: str
    title: str
    course: Path
    exercises: list[Exercise] = field(default_factory=list)
    conventions: dict[str, str] = field(default_factory=dict)  # rules every exercise follows: id -> sentence
    _by_folder: dict[Path, Exercise | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def public_dir(self) -> Path:
        return CourseDir(self.course).public(self.id)

    @property
    def hidden_dir(self) -> Path:
        return CourseDir(self.course).hidden(self.id)

    def exercise(self, exercise_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise AssignmentError(unknown_exercise(self.id, exercise_id, self.ids))

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.exercises]

    def rules_of(self, exercise: Exercise) -> dict[str, str]:
        """Every rule of the contract that ``exercise``'s hidden suite must check: the assignment's conventions
        (less those the exercise is exempt from) and the exercise's own rules, id -> sentence."""
        out = {k: v for k, v in self.conventions.items() if k not in exercise.conventions_exempt}
        out.update(exercise.rules)
        return out

    @property
    def max_total(self) -> float:
        return sum(e.points for e in self.exercises)

    def suite_files(self, exercises: Iterable[Exercise] | None = None, *, public: bool) -> list[Path]:
        """The suite file of each exercise (public or hidden); those that do not exist are left out."""
        chosen = self.exercises if exercises is None else exercises
        return [f for f in ((e.public_tests if public else e.hidden_tests) for e in chosen) if f.is_file()]

    def by_test_path(self, path: Path) -> Exercise | None:
        """The exercise whose hidden or public folder holds this suite file (looked up once per folder)."""
        folder = Path(path).resolve().parent
        if folder not in self._by_folder:
            self._by_folder[folder] = next(
                (e for e in self.exercises if folder in (e.hidden_dir.resolve(), e.public_dir.resolve())), None
            )
        return self._by_folder[folder]


def unknown_exercise(assignment_id: str, name: str, ids: list[str]) -> str:
    """What to say about an exercise id the assignment does not have: its real ids, and the closest one.

    The one wording for every lookup (``check --exercise``, ``grade --exercise``, ``validate --exercise``,
    ``check("...")`` in Jupyter), always from the whole assignment's ids, never a narrowed list.
    """
    listed = ", ".join(ids) or "none"
    return f"{assignment_id} has no exercise {name!r}.{closest(name, ids)} Its exercises are: {listed}."


def closest(name: str, ids: list[str]) -> str:
    """" Did you mean 'views'?" for the id nearest to ``name`` (difflib's ratio), or "" when none is near."""
    import difflib

    close = difflib.get_close_matches(name, ids, n=1, cutoff=0.5)
    return f" Did you mean {close[0]!r}?" if close else ""


def find_course(start: Path | None = None) -> Path:
    """The folder holding ``assignments/`` and ``solutions/``."""
    env = os.environ.get("TORCHGRADER_COURSE")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if CourseDir(d).exists():
            return d
    pkg_root = Path(__file__).resolve().parent.parent
    if CourseDir(pkg_root).exists():
        return pkg_root
    raise AssignmentError(
        "no course folder found: run from the folder that holds assignments/ and solutions/, "
        "or pass --course DIR (or set TORCHGRADER_COURSE)"
    )


def _refuse(problems: list[FileProblem]) -> None:
    if problems:
        raise AssignmentError(f"{problems[0].path}: " + "; ".join(p.message for p in problems))


def load_assignment(
    assignment_id: str, course: Path | None = None, *, need_hidden: bool = True, only: list[str] | None = None
) -> Assignment:
    """Load and check an assignment; ``only`` restricts it to some exercises (authoring)."""
    course = Path(course).resolve() if course else find_course()
    cd = CourseDir(course)
    meta_path = cd.assignment_toml(assignment_id)
    if not meta_path.exists():
        known = cd.assignment_ids()
        raise AssignmentError(
            f"no assignment {assignment_id!r} in {cd.public()}" + (f"; known: {', '.join(known)}" if known else "")
        )
    meta, problems = read_assignment_toml(course, assignment_id)
    _refuse(problems)
    assert meta is not None  # no problem: it was read
    ids: list[str] = meta["exercises"]
    a = Assignment(id=assignment_id, title=str(meta.get("title", assignment_id)), course=course,
                   conventions=dict(meta.get("conventions", ASSIGNMENT_KEYS["conventions"].default)))
    for wanted in only or []:  # checked against every id, before the assignment is narrowed to ``only``
        if wanted not in ids:
            raise AssignmentError(unknown_exercise(assignment_id, wanted, ids))
    for ex_id in ids:
        if only and ex_id not in only:
            continue
        layout = cd.exercise(assignment_id, ex_id)
        if not layout.public_dir.is_dir():
            raise AssignmentError(f"{meta_path}: lists {ex_id!r} but {layout.public_dir} does not exist")
        em, problems = read_exercise_toml(layout, ex_id)
        _refuse(problems)
        assert em is not None
        ex = _exercise(layout, ex_id, em)
        if need_hidden and not ex.hidden_tests.exists():
            raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
        a.exercises.append(ex)
    return a


def _exercise(layout: ExerciseLayout, ex_id: str, em: dict) -> Exercise:
    return Exercise(public_dir=layout.public_dir, hidden_dir=layout.hidden_dir, id=ex_id,
                    title=em["title"], points=float(em["points"]), timeout=float(em["timeout"]),
                    gpu=em.get("gpu", EXERCISE_KEYS["gpu"].default),
                    warm_dynamo=em.get("warm_dynamo", EXERCISE_KEYS["warm_dynamo"].default),
                    rules=dict(em.get("rules", EXERCISE_KEYS["rules"].default)),
                    conventions_exempt=dict(em.get("conventions_exempt", EXERCISE_KEYS["conventions_exempt"].default)))


def load_partial_assignment(course: Path, assignment_id: str) -> Assignment | None:
    """The exercises whose points and hidden suite can be read, when the assignment does not load as a whole.

    validate counts their points even so, so a mistake in the points is never reported only after
    the others are fixed. None when assignment.toml lists no exercises it can read.
    """
    course = Path(course).resolve()
    cd = CourseDir(course)
    meta, _ = read_toml(cd.assignment_toml(assignment_id))
    if meta is None or "exercises" not in meta:
        return None
    ids = meta["exercises"]
    a = Assignment(id=assignment_id, title=assignment_id, course=course)
    for ex_id in ids if isinstance(ids, list) else []:
        layout = cd.exercise(assignment_id, str(ex_id))
        em, _ = read_toml(layout.toml)
        if em is None:
            continue
        points = em.get("points")
        if isinstance(points, int | float) and not isinstance(points, bool) and layout.hidden_tests.is_file():
            a.exercises.append(Exercise(public_dir=layout.public_dir, hidden_dir=layout.hidden_dir, id=str(ex_id),
                                        title=str(ex_id), points=float(points)))
    return a
