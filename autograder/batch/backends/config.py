"""What every batch worker is told: which assignment, which limits. Plain JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.grade import GradeOptions


@dataclass
class WorkerConfig:
    course: str
    assignment: str
    exercises: list[str] | None = None
    memory_gb: float = 6.0
    cell_timeout: float = 60.0
    submission_timeout: float = 600.0
    isolate: bool = True
    allow_unisolated: bool = False  # grade even where the kernel refuses namespaces (hidden tests readable!)
    protected: list[str] = field(default_factory=list)  # folders no sandbox may see (inputs, output)
    suite_version: str = ""  # when set, a worker with other hidden material refuses to start

    def options(self) -> GradeOptions:
        from autograder.grade import GradeOptions
        from autograder.sandbox.isolation import Limits
        from autograder.session import Budget

        return GradeOptions(
            exercises=self.exercises,
            isolate=self.isolate,
            limits=Limits(memory_bytes=int(self.memory_gb * 2**30)),
            budget=Budget(cell_seconds=self.cell_timeout, submission_seconds=self.submission_timeout),
            protected=[Path(p) for p in self.protected],
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> WorkerConfig:
        return cls(**json.loads(text))

    def job_seconds(self) -> float:
        """How long the parent waits for one job before it declares the worker stuck."""
        return self.submission_timeout * 1.5 + 120
