"""Where an assignment's material lives, checked when it is loaded.

An exercise is a folder pair: ``assignments/<a>/<ex>/`` (what students get)
and ``solutions/<a>/<ex>/`` (staff-only). Mistakes in that material are
reported at load time with the file that has them, before anything runs.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.errors import AssignmentError
from autograder.errors import SuiteProblems as SuiteProblems

# ---------------------------------------------------------------------- the exercise layout
# The one place that says which file of an exercise is which. Everything else
# (lint, scaffold, release, Gradescope export, the store's suite version, the
# judge's collection) asks an :class:`ExerciseLayout` instead of spelling names.
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

PUBLIC_FILES = (EXERCISE_TOML, STATEMENT, PUBLIC_TESTS)  # shipped as files (the stub goes into the notebook)
STAFF_FILES = (REFERENCE, HIDDEN_TESTS, PROBES)  # never shipped to students
STAFF_DIRS = (ALTERNATIVES_DIR, MUTANTS_DIR)  # never shipped anywhere, Gradescope included
SUITE_FILE_PATTERNS = ("test_*.py", PUBLIC_TESTS)  # how pytest finds the hidden and public suites
NOT_FOR_GRADING = (REFERENCE, *STAFF_DIRS)  # staff-only files grading never reads: workers elsewhere never get them
CACHE_PARTS = ("__pycache__",)  # with every dot-named file or folder (.ipynb_checkpoints, .git): never material


def material_files(course: Path, assignment_id: str, *, grading_only: bool = False) -> list[tuple[Path, str, Path]]:
    """Every file of an assignment as ``(file, side, path inside side/<id>/)``, sorted: ``side`` is
    ``assignments`` or ``solutions``. Caches, dot-files and symlinks are never material; with
    ``grading_only``, neither are the references, alternatives and mutants.

    The one answer to "which files make up this assignment", for the validate stamp's digest, the
    material shipped to workers elsewhere, and the Gradescope autograder.
    """
    out: list[tuple[Path, str, Path]] = []
    for side in ("assignments", "solutions"):
        top = Path(course) / side / assignment_id
        if not top.is_dir():
            continue
        for p in sorted(top.rglob("*")):
            rel = p.relative_to(top)
            if not is_material(rel, staff=not (grading_only and side == "solutions")) or p.is_symlink():
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


@dataclass
class ExerciseLayout:
    """Where one exercise's files live: ``public_dir`` goes to students, ``hidden_dir`` never does."""

    public_dir: Path
    hidden_dir: Path

    @classmethod
    def of(cls, course: Path, assignment_id: str, exercise_id: str) -> ExerciseLayout:
        return cls(Path(course) / "assignments" / assignment_id / exercise_id,
                   Path(course) / "solutions" / assignment_id / exercise_id)

    @property
    def toml(self) -> Path:
        return self.public_dir / EXERCISE_TOML

    @property
    def statement(self) -> Path:
        return self.public_dir / STATEMENT

    @property
    def stub(self) -> Path:
        return self.public_dir / STUB

    @property
    def public_tests(self) -> Path:
        return self.public_dir / PUBLIC_TESTS

    @property
    def data_dir(self) -> Path:
        return self.public_dir / DATA_DIR

    @property
    def reference(self) -> Path:
        return self.hidden_dir / REFERENCE

    @property
    def hidden_tests(self) -> Path:
        return self.hidden_dir / HIDDEN_TESTS

    @property
    def probes(self) -> Path:
        return self.hidden_dir / PROBES

    @property
    def alternatives_dir(self) -> Path:
        return self.hidden_dir / ALTERNATIVES_DIR

    @property
    def mutants_dir(self) -> Path:
        return self.hidden_dir / MUTANTS_DIR

    @property
    def required(self) -> list[Path]:
        """The files every exercise must have (probes, alternatives and mutants are checked apart)."""
        return [self.statement, self.stub, self.public_tests, self.reference, self.hidden_tests]

    def alternatives(self) -> list[Path]:
        return sorted(self.alternatives_dir.glob("*.py"))

    def mutants(self) -> list[Path]:
        return sorted(self.mutants_dir.glob("*.py"))


# ---------------------------------------------------------------------- the exercise.toml schema
@dataclass(frozen=True)
class Key:
    """One key of exercise.toml: its type, whether it must be there, and its default when it need not."""

    kind: type | tuple[type, ...]
    required: bool
    default: object = None
    positive: bool = False
    doc: str = ""


EXERCISE_KEYS: dict[str, Key] = {
    "id": Key(str, False, doc="the exercise id; must equal its folder's name"),
    "title": Key(str, True, doc="the title students and staff see"),
    "points": Key((int, float), True, positive=True, doc="must equal the sum of the hidden tests' points"),
    "timeout": Key((int, float), True, positive=True, doc="seconds per test (wall clock)"),
    "gpu": Key(bool, False, default=False, doc="graded on CUDA when available, CPU fallback otherwise"),
    "warm_dynamo": Key(bool, False, default=False,
                       doc="its suites or probes compile or build an optimizer: torch._dynamo is imported ahead "
                           "(autograder.warmup; only a speed hint)"),
}


def exercise_toml_problems(meta: dict, folder: str) -> list[tuple[str | None, str]]:
    """Every way ``meta`` breaks the schema, as (key or None, message); empty when it is sound."""
    out: list[tuple[str | None, str]] = []
    for key, value in meta.items():
        spec = EXERCISE_KEYS.get(key)
        if spec is None:
            out.append((key, f"unknown key {key!r} (known: {', '.join(EXERCISE_KEYS)})"))
        elif not isinstance(value, spec.kind) or (spec.kind is not bool and isinstance(value, bool)):
            out.append((key, f"`{key}` has the wrong type ({type(value).__name__})"))
        elif spec.positive and isinstance(value, int | float) and value <= 0:
            out.append((key, f"`{key}` must be positive"))
    out += [(None, f"`{key}` is missing") for key, spec in EXERCISE_KEYS.items() if spec.required and key not in meta]
    if meta.get("id", folder) != folder:
        out.append(("id", f"id {meta.get('id')!r} does not match its folder {folder!r}"))
    return out


@dataclass
class Exercise(ExerciseLayout):
    """An exercise as exercise.toml declares it, with its files (:class:`ExerciseLayout`)."""

    id: str = ""
    title: str = ""
    points: float = 0.0
    timeout: float = 10.0
    gpu: bool = False
    warm_dynamo: bool = False


@dataclass
class Assignment:
    id: str
    title: str
    course: Path
    exercises: list[Exercise] = field(default_factory=list)
    _by_folder: dict[Path, Exercise | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def public_dir(self) -> Path:
        return self.course / "assignments" / self.id

    @property
    def hidden_dir(self) -> Path:
        return self.course / "solutions" / self.id

    def exercise(self, exercise_id: str) -> Exercise:
        for e in self.exercises:
            if e.id == exercise_id:
                return e
        raise AssignmentError(unknown_exercise(self.id, exercise_id, self.ids))

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.exercises]

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
        if (d / "assignments").is_dir():
            return d
    pkg_root = Path(__file__).resolve().parent.parent
    if (pkg_root / "assignments").is_dir():
        return pkg_root
    raise AssignmentError(
        "no course folder found: run from the folder that holds assignments/ and solutions/, "
        "or pass --course DIR (or set TORCHGRADER_COURSE)"
    )


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise AssignmentError(f"{path}: missing") from None
    except tomllib.TOMLDecodeError as e:
        raise AssignmentError(f"{path}: not valid TOML ({e})") from None


def load_assignment(
    assignment_id: str, course: Path | None = None, *, need_hidden: bool = True, only: list[str] | None = None
) -> Assignment:
    """Load and check an assignment; ``only`` restricts it to some exercises (authoring)."""
    course = Path(course).resolve() if course else find_course()
    public = course / "assignments" / assignment_id
    meta_path = public / ASSIGNMENT_TOML
    if not meta_path.exists():
        known = sorted(p.name for p in (course / "assignments").glob("*") if (p / ASSIGNMENT_TOML).exists())
        raise AssignmentError(
            f"no assignment {assignment_id!r} in {course / 'assignments'}"
            + (f"; known: {', '.join(known)}" if known else "")
        )
    meta = _read_toml(meta_path)
    ids = meta.get("exercises")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise AssignmentError(f"{meta_path}: `exercises` must be a list of exercise ids")
    a = Assignment(id=assignment_id, title=str(meta.get("title", assignment_id)), course=course)
    for wanted in only or []:  # checked against every id, before the assignment is narrowed to ``only``
        if wanted not in ids:
            raise AssignmentError(unknown_exercise(assignment_id, wanted, ids))
    for ex_id in ids:
        if only and ex_id not in only:
            continue
        ex_dir = public / ex_id
        if not ex_dir.is_dir():
            raise AssignmentError(f"{meta_path}: lists {ex_id!r} but {ex_dir} does not exist")
        layout = ExerciseLayout.of(course, assignment_id, ex_id)
        em = _read_toml(layout.toml)
        problems = exercise_toml_problems(em, ex_id)
        if problems:
            raise AssignmentError(f"{layout.toml}: " + "; ".join(m for _, m in problems))
        ex = Exercise(public_dir=layout.public_dir, hidden_dir=layout.hidden_dir, id=ex_id, title=em["title"],
                      points=float(em["points"]), timeout=float(em["timeout"]),
                      gpu=em.get("gpu", EXERCISE_KEYS["gpu"].default),
                      warm_dynamo=em.get("warm_dynamo", EXERCISE_KEYS["warm_dynamo"].default))
        if need_hidden and not ex.hidden_tests.exists():
            raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
        a.exercises.append(ex)
    return a
