"""Every CSV the grader writes goes through here, so no cell can become a spreadsheet formula.

Student-controlled text reaches CSV cells (a submission's file name, a
student id taken from it, review reasons): a file named ``=HYPERLINK(...).py``
would put a live formula into ``gradebook.csv`` for the TA who opens it in
Excel, LibreOffice or Google Sheets. Following OWASP's advice on CSV
injection, a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return gets a leading apostrophe, which spreadsheets show as text;
plain numbers (``-1.5``) are left as they are. The file is written aside and
renamed into place, so a reader never sees half of it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from autograder.printable import printable
from autograder.report.files import atomic_open

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def safe_cell(value: Any) -> str:
    """``value`` as a CSV cell that no spreadsheet evaluates and no terminal acts on (one line, controls escaped)."""
    raw = "" if value is None else str(value)
    text = printable(raw)
    if (raw.startswith(FORMULA_STARTS) or text.startswith(FORMULA_STARTS)) and not _NUMBER.match(text):
        return "'" + text
    return text


def _write(f: TextIO, header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> None:
    w = csv.writer(f)
    w.writerow([safe_cell(c) for c in header])
    for row in rows:
        w.writerow([safe_cell(c) for c in row])


def write_csv(path: Path, header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> None:
    """Write ``header`` and ``rows`` to ``path`` atomically, every cell neutralised."""
    with atomic_open(Path(path), newline="") as f:
        _write(f, header, rows)


def csv_text(header: Iterable[Any], rows: Iterable[Iterable[Any]]) -> str:
    """The same CSV as :func:`write_csv`, as text (a download served by the course's service)."""
    buf = io.StringIO(newline="")
    _write(buf, header, rows)
    return buf.getvalue()
