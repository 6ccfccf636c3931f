"""Where an assignment's material lives, checked when it is loaded.

An exercise is a folder pair: ``assignments/<a>/<ex>/`` (what students get)
and ``solutions/<a>/<ex>/`` (staff-only). Mistakes in that material are
reported at load time with the file that has them, before anything runs.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path


class AssignmentError(Exception):
    """Authoring mistake in an assignment's files; the message names the file."""


@dataclass
class Exercise:
    id: str
    title: str
    points: float
    timeout: float
    gpu: bool
    public_dir: Path
    hidden_dir: Path

    @property
    def hidden_tests(self) -> Path:
        return self.hidden_dir / "test_hidden.py"

    @property
    def public_tests(self) -> Path:
        return self.public_dir / "public_test.py"

    @property
    def probes(self) -> Path:
        return self.hidden_dir / "probes.py"

    @property
    def reference(self) -> Path:
        return self.hidden_dir / "reference.py"

    @property
    def stub(self) -> Path:
        return self.public_dir / "stub.py"

    @property
    def statement(self) -> Path:
        return self.public_dir / "statement.md"

    def alternatives(self) -> list[Path]:
        return sorted((self.hidden_dir / "alternatives").glob("*.py"))

    def mutants(self) -> list[Path]:
        return sorted((self.hidden_dir / "mutants").glob("*.py"))


@dataclass
class Assignment:
    id: str
    title: str
    course: Path
    exercises: list[Exercise] = field(default_factory=list)

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
        raise AssignmentError(f"{self.id} has no exercise {exercise_id!r}; it has {', '.join(self.ids)}")

    @property
    def ids(self) -> list[str]:
        return [e.id for e in self.exercises]

    @property
    def max_total(self) -> float:
        return sum(e.points for e in self.exercises)

    def by_test_path(self, path: Path) -> Exercise | None:
        path = Path(path).resolve()
        for e in self.exercises:
            if path.parent in (e.hidden_dir.resolve(), e.public_dir.resolve()):
                return e
        return None


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
    meta_path = public / "assignment.toml"
    if not meta_path.exists():
        known = sorted(p.name for p in (course / "assignments").glob("*") if (p / "assignment.toml").exists())
        raise AssignmentError(
            f"no assignment {assignment_id!r} in {course / 'assignments'}"
            + (f"; known: {', '.join(known)}" if known else "")
        )
    meta = _read_toml(meta_path)
    ids = meta.get("exercises")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise AssignmentError(f"{meta_path}: `exercises` must be a list of exercise ids")
    a = Assignment(id=assignment_id, title=str(meta.get("title", assignment_id)), course=course)
    for ex_id in ids:
        if only and ex_id not in only:
            continue
        ex_dir = public / ex_id
        if not ex_dir.is_dir():
            raise AssignmentError(f"{meta_path}: lists {ex_id!r} but {ex_dir} does not exist")
        em = _read_toml(ex_dir / "exercise.toml")
        if em.get("id", ex_id) != ex_id:
            raise AssignmentError(
                f"{ex_dir / 'exercise.toml'}: id {em.get('id')!r} does not match its folder {ex_id!r}"
            )
        try:
            ex = Exercise(
                id=ex_id,
                title=str(em.get("title", ex_id)),
                points=float(em.get("points", 10)),
                timeout=float(em.get("timeout", 10)),
                gpu=bool(em.get("gpu", False)),
                public_dir=ex_dir,
                hidden_dir=course / "solutions" / assignment_id / ex_id,
            )
        except (TypeError, ValueError) as e:
            raise AssignmentError(f"{ex_dir / 'exercise.toml'}: {e}") from None
        if need_hidden and not ex.hidden_tests.exists():
            raise AssignmentError(f"{ex.hidden_tests}: missing (every exercise needs its hidden suite)")
        a.exercises.append(ex)
    return a
