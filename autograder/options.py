"""The grading settings, in a module that imports nothing heavy.

The ``torchgrader`` command only reads arguments, starts workers and writes
reports: it must never import torch or pytest (that would delay its first
line by the whole import). Everything it needs to describe a grading run lives
here; the judge (``autograder.grade``, ``autograder.session``) re-exports it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograder.defaults import default_of
from autograder.sandbox.client import SandboxConfig
from autograder.sandbox.isolation import Limits


@dataclass
class Budget:
    """Wall-clock limits for one submission."""

    cell_seconds: float = 60.0  # one notebook cell
    submission_seconds: float = 600.0  # everything: cells, replays and all tests
    max_restarts: int = 20


@dataclass
class GradeOptions:
    """The grading settings, once: the CLI fills them in, batch workers receive them as JSON (``to_dict``)."""

    public: bool = False  # run the public tests (students' `check`) instead of the hidden ones
    exercises: list[str] | None = None  # restrict to these exercise ids
    isolate: bool = default_of(SandboxConfig, "isolate")  # namespaces, private root, seccomp (off: rlimits only)
    limits: Limits = field(default_factory=Limits)
    budget: Budget = field(default_factory=Budget)
    protected: list[Path] = field(default_factory=list)  # extra paths the sandbox must never see
    keyword: str | None = None  # pytest's -k: only the tests it selects (staff trying one test)

    def to_dict(self) -> dict[str, Any]:
        return {
            "public": self.public,
            "exercises": self.exercises,
            "isolate": self.isolate,
            "limits": asdict(self.limits),
            "budget": asdict(self.budget),
            "protected": [str(p) for p in self.protected],
            "keyword": self.keyword,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GradeOptions:
        """The inverse of :meth:`to_dict`; a key left out takes the field's own default."""
        given: dict[str, Any] = {k: d[k] for k in ("exercises", "keyword") if k in d}
        given |= {k: bool(d[k]) for k in ("public", "isolate") if k in d}
        return cls(
            **given,
            limits=Limits(**d.get("limits", {})),
            budget=Budget(**d.get("budget", {})),
            protected=[Path(p) for p in d.get("protected", [])],
        )
