"""What every batch worker is told: which assignment, and the grading settings. Plain JSON both ways."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from autograder.options import GradeOptions


@dataclass
class WorkerConfig:
    course: str
    assignment: str
    options: GradeOptions = field(default_factory=GradeOptions)  # the one settings object (see GradeOptions)
    allow_unisolated: bool = False  # grade even where the kernel refuses namespaces (hidden tests readable!)
    # `grade --allow-unisolated`: where no sandbox can start (a refused private root or /proc), grade without
    # namespaces instead of stopping. Off for validate, which stops there as its in-process path does.
    fallback_unisolated: bool = False
    suite_version: str = ""  # when set, a worker with other hidden material refuses to start
    judge_memory_gb: float = 4.0  # the judge process's own limit (RLIMIT_DATA); about 0.3 GiB is typical use

    def to_dict(self) -> dict[str, Any]:
        return {"course": self.course, "assignment": self.assignment, "options": self.options.to_dict(),
                "allow_unisolated": self.allow_unisolated,
                "fallback_unisolated": self.fallback_unisolated, "suite_version": self.suite_version,
                "judge_memory_gb": self.judge_memory_gb}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkerConfig:
        return cls(**{**d, "options": GradeOptions.from_dict(d.get("options", {}))})

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @classmethod
    def from_json(cls, text: str) -> WorkerConfig:
        return cls.from_dict(json.loads(text))

    def elsewhere(self, course: str) -> WorkerConfig:
        """This config for a worker on another file system (a container, a cluster): no host paths."""
        return replace(self, course=course, options=replace(self.options, protected=[]))

    def job_seconds(self) -> float:
        """How long the parent waits for one job before it declares the worker stuck."""
        return self.options.budget.submission_seconds * 1.5 + 120
