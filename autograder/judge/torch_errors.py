"""A raw PyTorch error, as a student should read it: their own lines, and one sentence on what it usually means.

The sandbox already trims an exception's frames to the student's cells; the
*message* of some errors still carries the grader's side of the stack
(``torch.compile`` prints "from user code:" with every frame, a probe's among
them, as ``File "<probes compile>"``) and absolute paths into the installed
packages. Those say nothing to a student and show the grader's layout, so
:func:`clean_message` drops the grader's frames and shortens package paths to
the package (``torch/nn/functional.py``). :func:`meaning` adds the one
sentence a TA would say next to the errors students meet most in these
exercises (``torch_errors.toml``); an error it does not know gets none.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

_PROBE_FRAME = re.compile(r'^\s*File "<probes [^"]*>", line \d+, in .*$')
_GRADER_FRAME = re.compile(r'^\s*File "[^"]*[/\\]autograder[/\\][^"]*", line \d+, in .*$')
_PACKAGE_PATH = re.compile(r"(?:[A-Za-z]:)?[^\s\"'()]*[/\\](?:site|dist)-packages[/\\]")

# (pattern in the message, the sentence), in the order they are tried: the prose lives in torch_errors.toml,
# beside this module, where course staff read and extend it.
_MEANINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(m["pattern"]), m["sentence"])
    for m in tomllib.loads((Path(__file__).parent / "torch_errors.toml").read_text())["meaning"]
)


def clean_message(message: str) -> str:
    """``message`` without the grader's frames (and the code line under each) and with short package paths."""
    out: list[str] = []
    skip_code = False
    for line in message.splitlines():
        if _PROBE_FRAME.match(line) or _GRADER_FRAME.match(line):
            skip_code = True
            continue
        if skip_code:
            skip_code = False
            if line.startswith((" ", "\t")) and not line.lstrip().startswith("File "):
                continue  # the source line printed under a grader frame
        out.append(_PACKAGE_PATH.sub("", line))
    return "\n".join(out)


def meaning(message: str) -> str:
    """One sentence on what this PyTorch error usually means in these exercises, or ""."""
    for pattern, sentence in _MEANINGS:
        if pattern.search(message):
            return sentence
    return ""
