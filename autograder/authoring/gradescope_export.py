"""``torchgrader export-gradescope ASSIGNMENT --out FILE.zip``: a Gradescope autograder.

The zip (Gradescope unpacks it into ``/autograder/source``)::

    setup.sh                 builds the image: a Python >= 3.11 venv in /autograder/venv,
                             PyTorch's CPU wheel, then torchgrader from the bundled wheel
    run_autograder           grades /autograder/submission into /autograder/results/results.json
    torchgrader-*.whl        the grader staff validated with (built from the installed package)
    course/assignments/<a>/  the public side (exercise.toml, statements, stubs, public tests)
    course/solutions/<a>/    what grading needs: hidden suites and probes (and data);
                             never references, alternatives or mutants

``run_autograder`` runs ``python -m autograder.authoring.gradescope_export run``: it picks the
submitted notebook, grades it with the hidden suites in the sandbox (the same
engine as ``torchgrader grade``), and writes Gradescope's ``results.json``.
When run as root (as on Gradescope) it first makes the hidden material
readable by root only: the sandbox drops to an unprivileged uid, so even
where the kernel refuses namespaces the student's code cannot read the
hidden suites. The root ``/autograder`` can be moved with the environment
variable ``TORCHGRADER_AUTOGRADER_ROOT`` (tests use a temporary folder), and
the interpreter with ``TORCHGRADER_PYTHON``.
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

from autograder.assignment import ASSIGNMENT_TOML, Assignment, CourseDir, find_course, is_material, load_assignment
from autograder.errors import AssignmentError
from autograder.printable import printable
from autograder.report.files import writable_folder

ROOT_ENV = "TORCHGRADER_AUTOGRADER_ROOT"
PYTHON_ENV = "TORCHGRADER_PYTHON"

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, to build the autograder image (from /autograder/source).
set -euo pipefail
ROOT="${{{root_env}:-/autograder}}"
HERE="$(cd "$(dirname "$0")" && pwd)"
# An interpreter that actually runs (a pyenv shim or a broken link is found by `command -v` too),
# is 3.11 or newer (torchgrader needs tomllib) and can make a venv.
works() {{
  "$1" -c 'import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1
}}
PY=""
for cand in python3.13 python3.12 python3.11 python3; do
  found="$(command -v "$cand" 2>/dev/null || true)"
  if [ -n "$found" ] && works "$found"; then PY="$found"; break; fi
  if [ -n "$found" ]; then echo "setup.sh: skipping $found: it does not run as Python >= 3.11 with venv"; fi
done
if [ -z "$PY" ]; then  # Gradescope's Ubuntu 22.04 base image has Python 3.10; torchgrader needs 3.11+
  echo "setup.sh: no working Python >= 3.11 found: installing python3.11 from apt"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3.11 python3.11-venv
  PY="$(command -v python3.11 || true)"
  if [ -z "$PY" ] || ! works "$PY"; then
    echo "setup.sh: python3.11 from apt does not run; install Python >= 3.11 in the image and rebuild" >&2
    exit 1
  fi
fi
echo "setup.sh: using $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q --upgrade pip
# The CPU wheel, named explicitly: a plain `pip install torch` would pull a multi-GB CUDA build.
"$ROOT/venv/bin/pip" install -q torch=={torch_version} --index-url https://download.pytorch.org/whl/cpu
"$ROOT/venv/bin/pip" install -q "$HERE/{wheel}[data]"
"$ROOT/venv/bin/python" -c "import autograder, torch; print('torchgrader ready, torch', torch.__version__)"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this as /autograder/run_autograder for every submission.
set -uo pipefail
ROOT="${{{root_env}:-/autograder}}"
PY="${{{python_env}:-}}"
if [ -z "$PY" ]; then
  if [ -x "$ROOT/venv/bin/python" ]; then PY="$ROOT/venv/bin/python"; else PY="$(command -v python3)"; fi
fi
mkdir -p "$ROOT/results"
# -P: never import from the current folder (a folder named like a module must not shadow the grader)
exec "$PY" -P -m autograder.authoring.gradescope_export run --root "$ROOT" --assignment {assignment}
"""


# ---------------------------------------------------------------------- export
def _torch_version() -> str:
    try:
        from importlib.metadata import version

        return version("torch").split("+")[0]
    except Exception:  # noqa: BLE001
        return "2.13.0"


def _add_tree(z: zipfile.ZipFile, src: Path, arc: str, *, staff: bool = True) -> None:
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if is_material(rel, staff=staff) and p.is_file() and not p.is_symlink():
            z.write(p, f"{arc}/{rel.as_posix()}")


def _add_text(z: zipfile.ZipFile, name: str, text: str, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, text)


def export(assignment: Assignment, out: Path) -> Path:
    """Write the autograder zip; returns its path."""
    from autograder.authoring.wheel import build_wheel

    out = Path(out)
    writable_folder(out.parent, "--out (the zip's folder)")
    with tempfile.TemporaryDirectory(prefix="torchgrader-export-") as tmp:
        wheel = build_wheel(Path(tmp))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            _add_text(
                z,
                "setup.sh",
                SETUP_SH.format(root_env=ROOT_ENV, torch_version=_torch_version(), wheel=wheel.name),
                executable=True,
            )
            _add_text(
                z,
                "run_autograder",
                RUN_AUTOGRADER.format(root_env=ROOT_ENV, python_env=PYTHON_ENV, assignment=assignment.id),
                executable=True,
            )
            z.write(wheel, wheel.name)
            inside = CourseDir(Path("course"))  # the course folder inside the zip
            pub = inside.public(assignment.id).as_posix()
            z.write(assignment.public_dir / ASSIGNMENT_TOML, f"{pub}/{ASSIGNMENT_TOML}")
            for ex in assignment.exercises:
                _add_tree(z, ex.public_dir, f"{pub}/{ex.id}")
                _add_tree(z, ex.hidden_dir, (inside.hidden(assignment.id) / ex.id).as_posix(), staff=False)
    return out


# ---------------------------------------------------------------------- run (on Gradescope)
def pick_submission(folder: Path, assignment_id: str) -> Path:
    """The notebook to grade: ``<assignment>.ipynb`` if present, else the only notebook (or .py)."""
    files = [
        p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
        and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(folder).parts)
    ]
    named = [p for p in files if p.name == f"{assignment_id}.ipynb"]
    if len(named) == 1:
        return named[0]
    for suffix in (".ipynb", ".py"):
        found = [p for p in files if p.suffix == suffix]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AssignmentError(
                f"several {suffix} files were submitted ({', '.join(p.name for p in found)}): "
                f"submit only your notebook, named {assignment_id}.ipynb"
            )
    raise AssignmentError(
        f"no notebook was submitted (found: {', '.join(p.name for p in files) or 'nothing'}): "
        f"submit {assignment_id}.ipynb"
    )


def _root_only(paths: list[Path]) -> None:
    """As root: make the grader's material unreadable to the sandbox's unprivileged uid."""
    if os.geteuid() != 0:
        return
    for top in paths:
        if not top.exists():
            continue
        for p in [top, *top.rglob("*")]:
            try:
                mode = p.lstat().st_mode
                if not stat.S_ISLNK(mode):
                    os.chmod(p, stat.S_IMODE(mode) & ~0o077)
            except OSError:
                pass


def grade_on_gradescope(root: Path, assignment_id: str, *, stream=None) -> dict:
    """Grade the submission under ``root`` and write ``root/results/results.json``; returns it."""
    from autograder.grade import grade
    from autograder.options import GradeOptions
    from autograder.report.submission import gradescope_results, protections_report

    stream = stream or sys.stdout
    results_dir = root / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    out = results_dir / "results.json"
    source = root / "source"
    try:
        _root_only([source, root / "submission", results_dir])
        a = load_assignment(assignment_id, source / "course")
        try:
            path = pick_submission(root / "submission", assignment_id)
        except AssignmentError as e:
            data = {"score": 0.0, "output": str(e), "stdout_visibility": "hidden", "tests": []}
        else:
            options = GradeOptions(protected=[source.resolve(), results_dir.resolve(), (root / "submission").resolve()])
            rs = grade(a, [path], options=options)
            r = rs[0]
            print(protections_report(r.protections), file=stream)
            print(f"graded {printable(path.name)}: {r.total:g}/{r.max_total:g} in {r.seconds:.1f} s", file=stream)
            data = gradescope_results(r)
    except Exception as e:  # noqa: BLE001 - Gradescope needs a results.json whatever happens
        traceback.print_exc(file=stream)
        data = {
            "score": 0.0,
            "stdout_visibility": "hidden",
            "tests": [],
            "output": f"The autograder itself failed ({type(e).__name__}: {e}); this is not your fault: "
            "course staff can see the details. Please tell them.",
        }
    out.write_text(json.dumps(data, indent=2))
    return data


# ---------------------------------------------------------------------- command line
def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("assignment", help="assignment id")
    p.add_argument("--out", required=True, help="the zip to write, e.g. autograder.zip")
    p.add_argument("--course", help="folder holding assignments/ and solutions/ (default: found from cwd)")


def cmd_export(args: argparse.Namespace) -> int:
    course = Path(args.course) if args.course else find_course()
    a = load_assignment(args.assignment, course)
    out = export(a, Path(args.out))
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
    print(
        f"wrote {out} ({len(names)} files, {out.stat().st_size / 1024:.0f} KiB): upload it as the Gradescope "
        "autograder; setup.sh installs Python 3.11+, PyTorch (CPU) and torchgrader, run_autograder grades "
        "/autograder/submission"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m autograder.authoring.gradescope_export")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="grade /autograder/submission (what run_autograder calls)")
    r.add_argument("--root", default=os.environ.get(ROOT_ENV, "/autograder"))
    r.add_argument("--assignment", required=True)
    args = p.parse_args(argv)  # exporting is `torchgrader export-gradescope`; this entry is Gradescope's only
    grade_on_gradescope(Path(args.root), args.assignment)
    return 0  # Gradescope reads results.json, which grade_on_gradescope() always writes


if __name__ == "__main__":
    sys.exit(main())
