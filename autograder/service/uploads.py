"""An uploaded notebook read within bounds: nesting depth, number of values and decoded text are capped
before anything is built from it, and only a few uploads are parsed at once.

``json.loads`` and nbformat build the whole document before anything can be
checked: a 2 MiB file of empty objects or arrays becomes hundreds of thousands
of Python objects, and nbformat's validation of them several times that, so
eight concurrent uploads took the web process to 2.4 GiB before each was
refused. Here a streaming parser (ijson, over yajl) walks the bytes first,
building nothing and stopping at the first bound passed; only a document
within every bound reaches nbformat, and at most ``at_once`` of those at a
time (the others wait their turn, then are told the server is busy).
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass

import ijson
import nbformat

from autograder.errors import RequestRefused
from autograder.printable import printable

MAX_DEPTH = 64  # a notebook saved by Jupyter nests about 8 levels deep (outputs' data: 6)
MAX_VALUES = 250_000  # JSON values (objects, arrays, strings, numbers...): a 2 MiB notebook of code has ~60,000
WAIT_SECONDS = 20.0  # how long an upload waits for its turn to be parsed before "busy, try again"


@dataclass
class NotebookBounds:
    max_depth: int = MAX_DEPTH
    max_values: int = MAX_VALUES
    max_text_bytes: int = 2 << 20  # characters of decoded strings and keys, all together


def check_bounds(data: bytes, name: str, bounds: NotebookBounds) -> None:
    """Walk ``data`` as JSON without building it; refuse (400) at the first bound it passes."""
    depth = values = text = 0
    hint = "save it again from Jupyter (File > Save) and upload the .ipynb file"
    try:
        for event, value in ijson.basic_parse(data, use_float=True):
            if event in ("start_map", "start_array"):
                depth += 1
                if depth > bounds.max_depth:
                    raise RequestRefused(400, f"{name}: not a notebook Jupyter saves: it nests deeper than "
                                              f"{bounds.max_depth} levels; {hint}")
            elif event in ("end_map", "end_array"):
                depth -= 1
                continue
            elif event in ("string", "map_key"):
                text += len(value)
                if text > bounds.max_text_bytes:
                    raise RequestRefused(400, f"{name}: holds more than {bounds.max_text_bytes // 1024} KB of text "
                                              f"once decoded; {hint}")
                if event == "map_key":
                    continue
            values += 1
            if values > bounds.max_values:
                raise RequestRefused(400, f"{name}: not a notebook Jupyter saves: it holds more than "
                                          f"{bounds.max_values:,} values; {hint}")
    except ijson.JSONError as e:
        why = printable(str(e).splitlines()[0] if str(e) else "malformed JSON")[:200]
        raise RequestRefused(400, f"{name}: not a readable notebook ({why}); {hint}") from None


class NotebookReader:
    """Checks uploaded notebooks: bounded first, then nbformat; at most ``at_once`` parsed at any moment."""

    def __init__(self, at_once: int, bounds: NotebookBounds | None = None) -> None:
        self.bounds = bounds or NotebookBounds()
        self.turns = threading.BoundedSemaphore(max(1, at_once))

    def check(self, data: bytes, text: str, name: str) -> None:
        """Refuse (400) what is not a valid notebook within bounds; 503 when others' parses hold every turn."""
        if not self.turns.acquire(timeout=WAIT_SECONDS):
            raise RequestRefused(503, "the server is busy reading other uploads: try again in a minute "
                                      "(nothing was submitted)", 30)
        try:
            check_bounds(data, name, self.bounds)
            try:
                with warnings.catch_warnings():  # nbformat's advice on cell ids is for authors, not this log
                    warnings.simplefilter("ignore")
                    nbformat.validate(nbformat.reads(text, as_version=4))
            except Exception as e:  # noqa: BLE001 - nbformat raises several kinds; each means "not a notebook"
                why = printable(str(e).splitlines()[0] if str(e) else type(e).__name__)[:200]
                raise RequestRefused(400, f"{name}: not a readable notebook ({why}); save it again from Jupyter "
                                          "(File > Save) and upload the .ipynb file") from None
        finally:
            self.turns.release()
