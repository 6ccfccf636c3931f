"""Students' ``check``: the public tests on their own code, in the same sandbox as grading.

Two entry points share this module:

- ``torchgrader check NOTEBOOK`` (the command line) grades a saved notebook or
  ``.py`` file;
- ``from autograder import check; check("softmax_grad")`` inside Jupyter grades
  the code the *kernel* has run, without leaving the notebook.

Inside Jupyter, "the notebook's current code" is taken from the kernel's input
history (``get_ipython().history_manager.input_hist_raw``): every cell this
kernel has executed, in the order it executed them, each as one cell (so the
feedback's "cell N" is the ``In [N]`` Jupyter shows). That is exactly the code
that defines what the student is looking at: edits run but not yet saved count,
cells never run do not. The saved ``.ipynb`` is not used because a kernel
cannot reliably know its notebook's path and the file may be older than what
ran. The history is written to a temporary notebook and graded by the same
machinery as ``torchgrader check``: each cell runs in the sandbox (a cell
that raises is recorded and the rest still run), then the exercise's public
tests call the resulting definitions. Pass ``notebook="file.ipynb"`` to check
a saved file instead. Outside IPython, a script that calls ``check()`` is
checked from its own file.

Inside the grading sandbox ``autograder.check`` does nothing (``autograder.IN_SANDBOX``):
a notebook's check cells cost nothing when it is graded.
"""

from __future__ import annotations

import atexit
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from autograder.assignment import PUBLIC_SIDE, Assignment, CourseDir, find_course, load_assignment
from autograder.errors import AssignmentError
from autograder.grade import grade
from autograder.options import GradeOptions
from autograder.printable import printable
from autograder.report.submission import console_cause
from autograder.report.text import block_lines
from autograder.report.view import view
from autograder.results import SubmissionResult

_SERVER: Any = None  # a warm sandbox server kept by a notebook kernel between checks


# ---------------------------------------------------------------------- the report
def check_report(r: SubmissionResult, assignment: Assignment | None = None) -> str:
    """Friendly per-exercise feedback on the public tests (a rendering of the one view-model of a result).

    Public tests carry no points, so a shared cause says how many tests it cost, not how many points.
    """
    v = view(r)
    lines = []
    if v.error:
        lines.append(printable(v.error, lines=True))
    for cause in v.causes:
        lines += console_cause(cause, v, "", points=False)
    for e in v.exercises:
        if not e.tests:
            continue
        verdict = "all pass" if e.passed == len(e.tests) else f"{len(e.tests) - e.passed} to fix"
        lines.append(f"{e.id} — {e.title}: {e.passed}/{len(e.tests)} public tests pass ({verdict})")
        for cause in e.causes:
            lines += console_cause(cause, v, "  ", points=False)
        for t in e.tests:
            lines.append(f"  [{t.mark.word}] {t.name}" + (f": {printable(t.on_its_line)}" if t.on_its_line else ""))
            if t.below:
                lines += [f"        {m}" for m in block_lines(t.below)]
    if v.cells:
        lines.append("Cells that did not run cleanly (later cells still ran):")
        lines += [f"  ! {printable(c.where)} {printable(c.status)}: {printable(c.first_line)}" for c in v.cells]
    tests = v.tests
    failing = [t for t in tests if not t.passed]
    if not tests and not v.error:
        lines.append("No public tests ran (is the exercise id right?).")
    elif not failing and tests:
        lines.append(f"{exercises_passing(r)}. All public tests pass. The graded tests are hidden and use other "
                     "inputs and edge cases: test those yourself too.")
    elif failing:
        lines.append(f"{exercises_passing(r)}; {len(failing)} public test(s) to fix. Public tests carry no points; "
                     "they show the kind of check the hidden tests make.")
    lines.append(f"({r.seconds:.1f} s in the grading sandbox)")
    return "\n".join(lines)


def exercises_passing(r: SubmissionResult) -> str:
    """"2 of 11 exercises pass": the exercises checked (those with public tests) whose every public test passes."""
    checked = [e for e in r.exercises if e.tests]
    ok = sum(all(t.status == "passed" for t in e.tests) for e in checked)
    if len(checked) == 1:
        return f"{ok} of 1 exercise passes"
    return f"{ok} of {len(checked)} exercises pass"


# ---------------------------------------------------------------------- finding the assignment
def student_course(course: str | Path | None, *, near: Path | None = None, in_jupyter: bool = True) -> Path:
    """The folder that holds the public tests (``assignments/``), found the way a student expects.

    Looked for in ``course`` when given, else in the notebook's folder (``near``) and the current
    folder, and their parents. The message when it is not found speaks to a student: their bundle
    has ``assignments/`` and ``HOWTO.md`` (and no ``solutions/``), and in Jupyter the argument
    is ``course=``, on the command line ``--course``.
    """
    if course:
        path = Path(course).expanduser().resolve()
        if CourseDir(path).exists():
            return path
        tried = f"{path} has no {PUBLIC_SIDE}/ folder"
    else:
        import os

        if os.environ.get("TORCHGRADER_COURSE"):
            return find_course()
        for start in [p.resolve() for p in (near, Path.cwd()) if p is not None]:
            for d in (start, *start.parents):
                if CourseDir(d).exists():
                    return d
        tried = f"no {PUBLIC_SIDE}/ folder in {Path.cwd()} or the folders above it"
    how = ('pass course="path/to/that/folder" to check()' if in_jupyter
           else "pass --course path/to/that/folder")
    raise AssignmentError(
        f"the public tests were not found ({tried}). They came with the assignment: the folder with "
        f"HOWTO.md and assignments/ in it. Open the notebook from that folder, or {how}.")


def notebook_assignment(path: Path) -> str | None:
    """The assignment id a released notebook records in its metadata."""
    if path.suffix != ".ipynb":
        return None
    try:
        meta = json.loads(path.read_text()).get("metadata", {})
        found = meta.get("torchgrader", {}).get("assignment")
        return str(found) if found else None
    except (OSError, ValueError, AttributeError):
        return None


def assignment_for(exercise: str | None, course: Path, given: str | None = None) -> str:
    """The assignment to check against: given, or the only one that has ``exercise``."""
    if given:
        return given
    cd = CourseDir(course)
    listed = []
    every: list[str] = []
    for assignment_id in cd.assignment_ids():
        ids = cd.listed_exercises(assignment_id)
        if ids is None:
            continue
        every += ids
        if exercise is None or exercise in ids:
            listed.append(assignment_id)
    if len(listed) == 1:
        return listed[0]
    if not listed and exercise:
        from autograder.assignment import closest

        raise AssignmentError(f"no assignment in {cd.public()} has an exercise {exercise!r}."
                              f"{closest(exercise, every)} The exercises are: {', '.join(every) or 'none'}.")
    if not listed:
        raise AssignmentError(f"no assignment in {cd.public()}")
    raise AssignmentError(f"several assignments could be meant ({', '.join(listed)}): pass assignment=\"...\"")


# ---------------------------------------------------------------------- away from Linux
def off_linux(how: str) -> str | None:
    """What checking cannot do on this system and why, or None on Linux (where the grading sandbox runs)."""
    if sys.platform.startswith("linux"):
        return None
    system = {"darwin": "macOS", "win32": "Windows", "cygwin": "Windows"}.get(sys.platform, sys.platform)
    return (f"{how} cannot run the public tests on {system}: they run only in the grading sandbox, which is built "
            "from Linux-only isolation (namespaces, seccomp, resource limits), and your code is never run "
            "outside it. What it can do here is list what each exercise still leaves to write (below). To run the "
            "tests, use Linux: WSL 2 on Windows, a Linux VM or container, or your course's JupyterHub. Your "
            "submission is graded on the course's Linux grader either way.")


def still_to_write(a: Assignment, sources: list[str]) -> list[str]:
    """Per exercise, the names its public tests call that the code does not define, or still leaves as stubs.

    Read from the code's text alone (nothing runs): the last top-level definition of a name counts, as
    when the cells run in order; one that raises ``NotImplementedError`` is still to write.
    """
    import ast

    state: dict[str, bool] = {}  # name -> written (False: still raises NotImplementedError)
    for src in sources:
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                state[node.name] = not any(isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n)
                                           for n in ast.walk(node))
    lines = []
    for ex in a.exercises:
        try:
            text = ex.public_tests.read_text()
        except OSError:
            continue
        names = list(dict.fromkeys(re.findall(r"\bstudent\.([A-Za-z_]\w*)", text)
                                   + re.findall(r"call_detailed\(\s*[\"']([A-Za-z_]\w*)", text)))
        names = [n for n in names if n != "call_detailed"]
        todo = [n for n in names if not state.get(n, False)]
        if todo:
            lines.append(f"  {ex.id}: still to write: " + ", ".join(
                f"{n}" + ("" if n in state else " (not defined)") for n in todo))
        elif names:
            lines.append(f"  {ex.id}: every function its public tests call is written ({', '.join(names)}); "
                         "whether it is right is for the tests to say")
    return lines


# ---------------------------------------------------------------------- cells the kernel has not run
def saved_notebook(assignment_id: str, user_ns: dict | None = None) -> Path | None:
    """The saved notebook this kernel most likely belongs to, to find cells it has not run; None if unknown.

    Jupyter Server tells its kernels their notebook (``JPY_SESSION_NAME``), VS Code sets
    ``__vsc_ipynb_file__``; otherwise the newest notebook of this assignment in the current folder
    (the kernel's folder is the notebook's). Only a hint for the message: nothing is graded from it.
    """
    import os

    named = [os.environ.get("JPY_SESSION_NAME", ""), str((user_ns or {}).get("__vsc_ipynb_file__", ""))]
    for name in named:
        if name.endswith(".ipynb"):
            for path in (Path(name), Path.cwd() / name, Path.cwd() / Path(name).name):
                if path.is_file():
                    return path
    mine = [p for p in Path.cwd().glob("*.ipynb") if notebook_assignment(p) == assignment_id]
    return max(mine, key=lambda p: p.stat().st_mtime, default=None)


def explain_unrun(r: SubmissionResult, saved: Path | None) -> None:
    """Rewrite "no cell defines `f`" where the saved notebook has a cell defining ``f`` the kernel has not run.

    Checking from Jupyter grades the cells the kernel ran: a check cell run before its code cell
    would otherwise tell the student their notebook defines nothing, the most common Jupyter slip.
    """
    from autograder.errors import LoadError
    from autograder.judge.proxy import NO_CELL_DEFINES
    from autograder.load import defines, load

    missing = re.compile(r"`(?P<name>[A-Za-z_]\w*)` is not defined\.[^`]*?" + re.escape(NO_CELL_DEFINES.strip()))
    cells = []
    if saved is not None:
        try:
            cells = load(saved).cells
        except LoadError:
            pass
    for e in r.exercises:
        for t in e.tests:
            m = missing.search(t.message)
            if not m:
                continue
            name = m.group("name")
            cell = next((c for c in cells if defines(c.source, name)), None)
            if cell is not None:
                why = (f"`{name}` is not defined in this kernel yet: run the cell that defines it (cell {cell.index} "
                       f"of {saved.name if saved else 'your notebook'}, `{cell.first_line}`) first, then this check "
                       "again. Only the cells this kernel has run are checked.")
            else:
                why = (f"`{name}` is not defined: no cell this kernel has run defines it. If a cell of your notebook "
                       "defines it, run that cell first (a check only sees the cells the kernel has run); otherwise "
                       "define it at the top level of a code cell, with exactly this name (check the spelling).")
            t.message = t.message[:m.start()] + why + t.message[m.end():]


# ---------------------------------------------------------------------- grading
def _server(warm_compiler: bool = False) -> Any:
    """One warm sandbox server per kernel: the first check starts it, later ones reuse it.

    Starting it returns at once (the server imports torch in its own process,
    while this one imports the judge); the first sandbox waits for it.
    """
    global _SERVER
    from autograder.sandbox.client import SandboxServer

    if _SERVER is not None and _SERVER.proc.poll() is None:
        return _SERVER
    if _SERVER is None:
        atexit.register(_close_server)
    _SERVER = SandboxServer(warm_compiler=warm_compiler)
    return _SERVER


def _close_server() -> None:
    global _SERVER
    if _SERVER is not None:
        try:
            _SERVER.close()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
        _SERVER = None


def grade_public(path: Path, assignment: Assignment, exercises: list[str] | None = None,
                 options: GradeOptions | None = None, server: Any = None) -> SubmissionResult:
    options = options or GradeOptions()
    options.public = True
    options.exercises = exercises or options.exercises
    results = grade(assignment, [path], options=options, server=server)
    if not results:
        raise AssignmentError("no public tests to run for " + (", ".join(exercises) if exercises else assignment.id))
    return results[0]


def kernel_history() -> list[str] | None:
    """The raw source of every cell this IPython kernel has run, indexed by execution count (0 is empty)."""
    try:
        ip = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - defined by IPython
    except NameError:
        try:
            from IPython import get_ipython as _get
        except ImportError:
            return None
        ip = _get()
    if ip is None:
        return None
    hist = getattr(getattr(ip, "history_manager", None), "input_hist_raw", None)
    if hist is None:
        hist = ip.user_ns.get("In")
    return list(hist) if hist is not None else None


def _user_ns() -> dict | None:
    try:
        from IPython import get_ipython as _get
    except ImportError:
        return None
    ip = _get()
    return getattr(ip, "user_ns", None) if ip is not None else None


def history_notebook(history: list[str], dest: Path, assignment_id: str) -> Path:
    """A notebook whose cell N is the kernel's ``In [N]`` (positions match execution counts)."""
    from autograder.load import import_nbformat

    nbformat = import_nbformat()

    nb = nbformat.v4.new_notebook()
    nb.metadata["torchgrader"] = {"assignment": assignment_id}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in history[1:]]
    if not any(src.strip() for src in history[1:]):
        nb.cells.append(nbformat.v4.new_code_cell("pass"))
    nbformat.write(nb, str(dest))
    return dest


def later_imports(a: Assignment, exercise: str | None, history: list[str] | None, target: Path | None) -> list[str]:
    """What a kernel's later checks would otherwise import in every sandbox: torch._dynamo when the checked
    exercise trains or compiles, scikit-learn when the notebook's code uses it (every check runs every cell).
    Only a hint for the server (:mod:`autograder.warmup`); never what a grade depends on."""
    from autograder.warmup import warm_dynamo

    wanted = []
    if warm_dynamo(a, [exercise] if exercise else None):
        wanted.append("torch._dynamo")
    code = "\n".join(history) if history is not None else ""
    if history is None and target is not None:
        from autograder.errors import LoadError
        from autograder.load import load

        try:
            code = "\n".join(c.source for c in load(target).cells)  # code cells only, not the statement
        except LoadError:
            pass
    if "sklearn" in code:
        wanted.append("sklearn.datasets")
    return wanted


def check_in_notebook(exercise: str | None = None, *, assignment: str | None = None, notebook: str | None = None,
                      course: str | None = None) -> SubmissionResult | None:
    """What ``autograder.check`` does outside the sandbox; prints the report."""
    started = time.monotonic()
    target: Path | None = Path(notebook).resolve() if notebook else None
    course_dir = student_course(course, near=target.parent if target else None)
    history = None
    if target is None:
        history = kernel_history()
        if history is None:
            main_file = getattr(sys.modules.get("__main__"), "__file__", None)
            if main_file and main_file.endswith((".py", ".ipynb")):
                target = Path(main_file).resolve()
            else:
                if exercise:  # a mistyped id is said first, with the real ones, wherever check() runs
                    found = assignment_for(exercise, course_dir, assignment)
                    load_assignment(found, course_dir, need_hidden=False, only=[exercise])
                print("check(): not running in Jupyter/IPython; pass notebook=\"your_notebook.ipynb\".")
                return None
    if target is not None and not target.is_file():
        raise AssignmentError(f"{target}: no such file")
    assignment_id = assignment or (notebook_assignment(target) if target else None)
    assignment_id = assignment_for(exercise, course_dir, assignment_id)
    a = load_assignment(assignment_id, course_dir, need_hidden=False, only=[exercise] if exercise else None)
    if (why := off_linux("check()")) is not None:
        if history is not None:
            sources = list(history)
        else:
            from autograder.errors import LoadError
            from autograder.load import load

            try:
                sources = [c.source for c in load(target).cells] if target is not None else []
            except LoadError:
                sources = []
        print("\n".join([why, *still_to_write(a, sources)]))
        return None
    from autograder.warmup import warm_dynamo

    server = _server(warm_dynamo(a, [exercise] if exercise else None))
    what = f"exercise {exercise!r}" if exercise else f"all of {assignment_id}"
    print(f"Checking {what} against its public tests in the grading sandbox...", flush=True)
    with tempfile.TemporaryDirectory(prefix="torchgrader-check-") as tmp:
        if target is None:
            target = history_notebook(history or [""], Path(tmp) / "kernel_history.ipynb", assignment_id)
        r = grade_public(target, a, [exercise] if exercise else None, server=server)
    r.seconds = time.monotonic() - started
    if history is not None:
        explain_unrun(r, saved_notebook(assignment_id, _user_ns()))
    print(check_report(r, a))
    wanted = later_imports(a, exercise, history, target)
    if wanted:  # while the student reads: the next check's sandbox starts with them
        server.warm_later(wanted)
    if history is not None and any(c.status != "ok" for c in r.cells):
        print("(cell numbers are the In [N] execution counts of this kernel)")
    return r
