"""torchgrader: a trusted judge drives sandboxed student code.

Students can check their work from inside a notebook::

    from autograder import check
    check("softmax_grad")

This module stays import-light: the sandbox imports it next to student code.
"""

from __future__ import annotations

# Set by autograder.sandbox.runtime in the sandbox process, before any student code runs.
IN_SANDBOX = False


def check(exercise: str | None = None, *, assignment: str | None = None, notebook: str | None = None,
          course: str | None = None) -> None:
    """Run the public tests of ``exercise`` (all exercises when None) on this notebook's code.

    In Jupyter, the code is every cell this kernel has run, in the order it ran
    (``In [1]``, ``In [2]``, ...): what you have run is what gets checked, in the
    same sandbox as grading, and friendly feedback is printed. Pass
    ``notebook="file.ipynb"`` to check a saved notebook instead. The
    assignment is found from the exercise id (pass ``assignment=`` when several
    assignments have it) in the course folder above the current directory
    (``course=`` to name it). See :mod:`autograder.checker` for the details.

    While a notebook is being graded (inside the sandbox), this does nothing
    but print one line, so check cells never cost anything.
    """
    if IN_SANDBOX:
        print(f"check({exercise!r}) skipped: this code is being graded, which runs its own tests.")
        return None
    import os

    # nbgrader runs the notebook's cells itself: `nbgrader autograde` would give the check cells (its
    # grade cells) full points just for not raising, and `nbgrader validate` would say "Success" for
    # an untouched notebook. Refuse the first; make the second report the public tests.
    nbgrader = os.environ.get("NBGRADER_EXECUTION", "")
    if nbgrader == "autograde":
        raise RuntimeError("this notebook is graded by torchgrader's hidden tests, not by `nbgrader autograde`: "
                           "run `torchgrader grade submitted/ --assignment ID --nbgrader-db gradebook.db`")
    from autograder.checker import check_in_notebook
    from autograder.errors import AssignmentError

    try:
        r = check_in_notebook(exercise, assignment=assignment, notebook=notebook, course=course)
    except AssignmentError as e:  # a setup problem, not a bug in the student's code: one clear line
        print(f"check({exercise!r}) could not run: {e}")
        if nbgrader == "validate":
            raise
        return None
    if nbgrader == "validate" and r is not None:
        failing = sum(t.status != "passed" for e in r.exercises for t in e.tests) + (r.status != "graded")
        if failing or not any(e.tests for e in r.exercises):
            raise AssertionError(f"{failing} public test(s) of {exercise or 'this notebook'} do not pass yet "
                                 "(the report above says which, and what to fix)")
    return None


def submit(notebook: str | None = None, *, server: str | None = None, token: str | None = None,
           assignment: str | None = None, wait: bool = True) -> dict | None:
    """Submit this notebook to the course's torchgrader service and print the feedback when it is graded.

    It sends the SAVED notebook file (the one a TA would grade), and warns when
    cells you ran are not saved yet. The server is named by the released
    notebook; your own token is asked for once (paste your sign-in link) and
    kept on your machine (``~/.config/torchgrader/tokens.json``), never in the
    notebook. Pass ``notebook=`` when it cannot find the file. While the
    notebook is being graded (inside the sandbox), this does nothing.
    """
    if IN_SANDBOX:
        print("submit() skipped: this code is being graded.")
        return None
    from autograder.service.client import notebook_submit

    return notebook_submit(notebook, server=server, token=token, assignment=assignment, wait_for_grade=wait)
