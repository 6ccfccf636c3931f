"""benchmarks/speed.py's compile chain takes the sandbox server's own steps, and compiles as the compile
exercise's probes do: the least a cold run that grades that exercise waits for (timings are never asserted)."""

from __future__ import annotations

from autograder.sandbox import server
from benchmarks.speed import compile_chain
from tests.helpers import ROOT


def test_the_chain_compiles_the_ways_the_compile_exercises_probes_do():
    ways = [how for how in server.WARM_COMPILES if how.get("inference")]
    assert {"backend": "own", "fullgraph": True, "inference": True} in ways  # the probes' counting backend
    assert any(how["backend"] == "aot_eager" and how.get("dynamic") for how in ways)  # compile_dynamic's check
    probes = (ROOT / "solutions" / "pytorch-fundamentals" / "compile" / "probes.py").read_text()
    assert "fullgraph=True" in probes and 'backend = "aot_eager"' in probes


def test_the_chain_runs_each_step_in_a_fresh_interpreter():
    took, steps = compile_chain()
    assert set(steps) == {"preload", "dynamo", "compiles"}
    assert all(seconds > 0 for seconds in steps.values()), steps
    assert took >= sum(steps.values())  # the interpreter's start comes on top of its steps
