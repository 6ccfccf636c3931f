"""A raw PyTorch error, as a student should read it: their own lines, and one sentence on what it usually means.

The sandbox already trims an exception's frames to the student's cells; the
*message* of some errors still carries the grader's side of the stack
(``torch.compile`` prints "from user code:" with every frame, a probe's among
them, as ``File "<probes compile>"``) and absolute paths into the installed
packages. Those say nothing to a student and show the grader's layout, so
:func:`clean_message` drops the grader's frames and shortens package paths to
the package (``torch/nn/functional.py``). :func:`meaning` adds the one
sentence a TA would say next to the errors students meet most in these
exercises; an error it does not know gets none.
"""

from __future__ import annotations

import re

_PROBE_FRAME = re.compile(r'^\s*File "<probes [^"]*>", line \d+, in .*$')
_GRADER_FRAME = re.compile(r'^\s*File "[^"]*[/\\]autograder[/\\][^"]*", line \d+, in .*$')
_PACKAGE_PATH = re.compile(r"(?:[A-Za-z]:)?[^\s\"'()]*[/\\](?:site|dist)-packages[/\\]")

# (pattern in the message, the sentence). First match wins; keep each to what the error means in this
# course's exercises, never the fix itself.
_MEANINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"mat1 and mat2 shapes cannot be multiplied|size mismatch, got input|shapes cannot be multiplied"),
     "A matrix product got operands whose inner sizes differ: compare each operand's shape with the statement's "
     "(a weight stored as (d_in, d_out) is used as x @ W; one stored as (d_out, d_in), like nn.Linear's, needs "
     "its transpose)."),
    (re.compile(r"Expected all tensors to be on the same device"),
     "Two tensors of one operation live on different devices: create new tensors on the input's device."),
    (re.compile(r"does not require grad and does not have a grad_fn"),
     "backward() was called on a value autograd did not record: something on the way to the loss was computed "
     "without gradient tracking (under no_grad, after .detach(), .item(), NumPy, or from an integer result)."),
    (re.compile(r"Trying to backward through the graph a second time"),
     "A graph was backpropagated twice: each backward() frees the graph it used, so every backward needs a "
     "fresh forward (or a value that does not reach back into the earlier graph)."),
    (re.compile(r"modified by an inplace operation"),
     "A tensor autograd saved for the backward pass was changed in place afterwards: compute a new tensor "
     "instead of modifying that one."),
    (re.compile(r"expected (?:scalar type|m1 and m2 to have the same dtype|mat1 and mat2 to have the same dtype)"
                r"|found dtype \w+ but expected|have the same dtype"),
     "An operation mixed two dtypes: keep the input's dtype throughout (create constants and new tensors with "
     "dtype=x.dtype)."),
    (re.compile(r"view size is not compatible with input tensor's size and stride"),
     ".view() needs a layout it can reinterpret without copying: this tensor is not contiguous in that way."),
    (re.compile(r"shape '\[[-\d, ]*\]' is invalid for input of size"),
     "A reshape asked for a shape with a different number of elements than the tensor holds."),
    (re.compile(r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\)"),
     "Two tensors of an elementwise operation have shapes that do not broadcast: check which dimension each "
     "one indexes (a missing keepdim=True, a sum over the wrong dim)."),
    (re.compile(r"Dimension out of range"),
     "A dim argument names a dimension the tensor does not have (a 1-D input has only dim 0 / -1)."),
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
