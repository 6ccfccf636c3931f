"""The judge caps every student-derived string itself (the sandbox's own cap is the student's to remove)."""

from __future__ import annotations

from autograder.caps import CELLS_CHARS, MARKER, MESSAGE_CHARS, OUTPUT_CHARS, cap, cap_error, cap_result
from autograder.results import CellResult, ExerciseResult, SubmissionResult
from autograder.results import TestResult as Result


def test_long_strings_are_cut_with_a_visible_marker_and_short_ones_kept():
    assert cap("short") == "short"
    out = cap("x" * 10**7)
    assert len(out) <= MESSAGE_CHARS and MARKER in out and "more characters" in out
    assert cap(12345) == "12345"


def test_a_forged_error_description_is_capped_field_by_field():
    err = {
        "kind": "k" * 10**6,
        "type": "T" * 10**6,
        "message": "m" * 5 * 10**7,
        "frames": [[1, 2, "f" * 10**6, "c" * 10**6]] * 1000 + ["junk"],
    }
    out = cap_error(err)
    assert len(out["message"]) <= MESSAGE_CHARS and len(out["type"]) <= 200 and len(out["kind"]) <= 64
    assert len(out["frames"]) <= 8 and all(len(f[2]) <= 200 and len(f[3]) <= 300 for f in out["frames"])
    assert cap_error("just a string")["message"] == "just a string"


def test_every_string_of_a_result_is_capped_and_the_cells_share_a_budget():
    big = "y" * 10**6
    r = SubmissionResult("s", "s.py", "a", error=big, output=big + "THE END")
    r.cells = [CellResult(i, "error", big) for i in range(100)]
    r.exercises = [ExerciseResult("e", "E", 1, [Result("n", "t", "e", 1, message=big, detail=big)])]
    cap_result(r)
    assert len(r.error) <= MESSAGE_CHARS and len(r.output) <= OUTPUT_CHARS and r.output.endswith("THE END")
    assert MARKER in r.output and MARKER in r.error
    assert sum(len(c.message) for c in r.cells) <= CELLS_CHARS + 100 * 60
    t = r.exercises[0].tests[0]
    assert len(t.message) <= MESSAGE_CHARS and MARKER in t.message and len(t.detail) <= MESSAGE_CHARS
    assert len(str(r.to_dict())) < 150_000
