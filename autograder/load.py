"""Stage 1 (load): load a submission into the list of code cells the sandbox will run.

Loading never executes anything. Notebooks go through nbformat (older
versions are converted to v4); ``.py`` files are split into cells at
``# %%`` lines (jupytext's percent format). IPython-only syntax (``%magic``,
``%%cell magic``, ``!shell``, ``obj?``) is neutralised here, so it is never
executed and never a syntax error.
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.errors import LoadError

SUBMISSION_SUFFIXES = (".ipynb", ".py")
# Cell magics whose body is ordinary Python: keep the body, drop the magic line.
_TRANSPARENT_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
_LINE_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_ASSIGNED_MAGIC = re.compile(r"^(\s*[\w.\[\], ]+=\s*)([%!].*)$")
_HELP = re.compile(r"^(\s*)(\?{1,2}[\w.]+|[\w.]+\?{1,2})\s*$")


@dataclass
class Cell:
    index: int  # 1-based position in the notebook (markdown cells count), or in the .py
    source: str  # neutralised source, ready to run
    first_line: str = ""
    in_notebook: bool = True
    line_offset: int = 0  # a .py cell's first line is the file's line line_offset + 1

    def file_line(self, line: int) -> int:
        """A line of this cell as a line of the student's file (the cell's own number in a notebook)."""
        return line + self.line_offset

    @property
    def label(self) -> str:
        head = f"cell {self.index}" if self.in_notebook else f"the code at line {self.index}"
        return head + (f" (`{self.first_line}`)" if self.first_line else "")

    def location(self, line: int | None) -> str:
        """Where a line of this cell is, in the student's own terms."""
        if not self.in_notebook:
            return f"line {self.file_line(line or 1)}"
        return f"cell {self.index}" + (f", line {line}" if line else "")


@dataclass
class Submission:
    path: Path
    name: str  # the file stem: the gradebook's `submission` column
    cells: list[Cell] = field(default_factory=list)
    sha256: str = ""


def neutralise(source: str) -> str:
    """Replace IPython-only syntax with inert Python, keeping line numbers."""
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].strip()[2:].split()[0] if lines[0].strip()[2:] else ""
        if magic in _TRANSPARENT_CELL_MAGICS:
            lines[0] = f"pass  # neutralised: %%{magic}"
        else:
            return "\n".join(
                f"# neutralised (cell magic %%{magic}): {ln}" if i == 0 else f"# {ln}" for i, ln in enumerate(lines)
            )
    out = []
    for ln in lines:
        m = _ASSIGNED_MAGIC.match(ln)
        if m and not _in_string_context(m.group(1)):
            out.append(f"{m.group(1)}None  # neutralised: {m.group(2)}")
            continue
        m = _LINE_MAGIC.match(ln) or _HELP.match(ln)
        if m:
            out.append(f"{m.group(1)}pass  # neutralised: {m.group(2)}")
            continue
        out.append(ln)
    return "\n".join(out)


def _in_string_context(prefix: str) -> bool:
    return prefix.count('"') % 2 == 1 or prefix.count("'") % 2 == 1


def _cell_label(source: str) -> str:
    """What identifies a cell to its author: its first definition, else its first statement."""
    lines = [ln.strip() for ln in source.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    for s in lines:
        if s.startswith(("def ", "class ", "async def ")):
            return s.rstrip(":")[:60]
    return lines[0][:60] if lines else ""


def defines(source: str, name: str) -> bool:
    """Whether a cell's source defines ``name`` at top level (def, class or assignment)."""
    pattern = rf"^(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*(?::[^=]*)?="
    return re.search(pattern, source, re.MULTILINE) is not None


def load(path: str | Path) -> Submission:
    """Read a notebook or .py submission. Raises LoadError with a student-facing message."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise LoadError(f"{path.name} could not be read ({e.strerror}).") from None
    sub = Submission(path=path, name=path.stem, sha256=hashlib.sha256(raw).hexdigest())
    if path.suffix == ".ipynb":
        sources = _notebook_cells(path, raw)
    elif path.suffix == ".py":
        sources = _py_cells(path, raw)
    else:
        raise LoadError(f"{path.name} is neither a notebook (.ipynb) nor a Python file (.py).")
    for index, src in sources:
        notebook = path.suffix == ".ipynb"
        sub.cells.append(Cell(index=index, source=neutralise(src), first_line=_cell_label(src), in_notebook=notebook,
                              line_offset=0 if notebook else index - 1))
    if not any(c.source.strip() for c in sub.cells):
        raise LoadError(f"{path.name} has no code: did you submit the right file, and save it first?")
    return sub


def import_nbformat() -> Any:
    """``import nbformat``, without jsonschema's IRI format checker.

    jsonschema imports ``rfc3987_syntax`` when it is installed (Jupyter pulls
    it in), which builds 38 Lark grammars: a second or more in every judge's
    first notebook. nbformat validates without any format checker, so nothing
    it checks changes; the block is lifted again once nbformat is imported.
    """
    if "nbformat" in sys.modules or "jsonschema" in sys.modules or "rfc3987_syntax" in sys.modules:
        import nbformat

        return nbformat
    # None in sys.modules makes its import raise ImportError
    sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]
    try:
        import nbformat
    finally:
        if sys.modules.get("rfc3987_syntax", 0) is None:
            del sys.modules["rfc3987_syntax"]
    return nbformat


def _notebook_cells(path: Path, raw: bytes) -> list[tuple[int, str]]:
    nbformat = import_nbformat()

    if not raw.strip():
        raise LoadError(
            f"{path.name} is empty (0 bytes of notebook). Save the notebook in Jupyter and submit it again."
        )
    try:
        nb = nbformat.reads(raw.decode("utf-8"), as_version=4)
    except UnicodeDecodeError:
        raise LoadError(f"{path.name} is not a text file: it is not a Jupyter notebook.") from None
    except Exception as e:  # nbformat raises several types for damaged files
        detail = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
        raise LoadError(
            f"{path.name} is not a readable Jupyter notebook ({detail}). "
            "It may have been damaged by a text editor or a merge: open it in Jupyter, "
            "or download it again, and resubmit."
        ) from None
    cells = []
    for i, cell in enumerate(nb.get("cells", []), start=1):
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            if isinstance(src, list):
                src = "".join(src)
            cells.append((i, str(src)))
    if not cells:
        raise LoadError(f"{path.name} has no code cells: did you submit the right notebook?")
    return cells


_TOP_LEVEL_START = re.compile(r"^(def |class |async def |@)")


def _py_cells(path: Path, raw: bytes) -> list[tuple[int, str]]:
    """Split a .py file into cells, each starting at its line of the file (its index).

    A cell's source is never padded to its line number (60,000 cells would make
    that quadratic in the file's size); ``Cell.line_offset`` maps its lines back.

    ``# %%`` markers split it when present; otherwise each top-level ``def``,
    ``class`` or decorated block (after a blank line) starts a new cell, so a
    syntax error costs only the block that has it.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LoadError(f"{path.name} is not UTF-8 text: save it as UTF-8 and resubmit.") from None
    lines = text.splitlines()
    marked = any(ln.startswith("# %%") for ln in lines)
    starts = []
    for i, ln in enumerate(lines):
        if marked:
            if ln.startswith("# %%"):
                starts.append(i)
        elif (
            _TOP_LEVEL_START.match(ln)
            and (i == 0 or not lines[i - 1].strip())
            and not (i > 0 and lines[i - 1].startswith("@"))
        ):
            starts.append(i)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(lines))
    cells: list[tuple[int, str]] = []
    for a, b in zip(starts, starts[1:], strict=False):
        block = lines[a:b]
        if any(x.strip() and not x.startswith("# %%") for x in block):
            cells.append((a + 1, "\n".join(block)))
    return cells
