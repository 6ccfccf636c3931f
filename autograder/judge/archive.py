"""Decoding a file a student's code wrote (a ``torch.save`` checkpoint), without trusting it.

``torch.load`` is an unpickler and a decompressor: even with
``weights_only=True`` it runs on student bytes, and a 2 MiB file with one
DEFLATE-compressed 2 GiB storage once took the judge from 334 to 2395 MiB.
So the judge never runs it. It reads the zip archive's central directory
(which decompresses nothing) and refuses a file whose declared sizes exceed a
small multiple of the bytes received; only then is the file decoded, in a NEW
sandbox that never ran (and never will run) student code, and the result
comes back as plain values over the wire, whose decoder is bounded by the
bytes that arrive.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any, Protocol


class CleanRunner(Protocol):
    """What runs the decoder: ``judge.proxy.Context`` (a sandbox where no student code runs, one per submission)."""

    def clean_probe(self, source: str, name: str, args: tuple, *, label: str) -> Any: ...

# A checkpoint's storages are written uncompressed by torch.save; a little slack covers its metadata.
MAX_INFLATION = 4
SLACK_BYTES = 1 << 20
MAX_ENTRIES = 10_000

# The decoder, run as the probe module of a sandbox that has run nothing else. It is the grader's own
# code, never a student's; what it returns crosses as plain data (mappings become dicts).
DECODER = '''
import io

import torch


def _plain(v, depth=0):
    if depth > 40:
        return "<nested too deeply>"
    if isinstance(v, torch.Tensor):
        return v.detach().cpu()
    if isinstance(v, dict):
        return {k if isinstance(k, (str, int, float, bool)) or k is None else repr(k): _plain(x, depth + 1)
                for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        out = [_plain(x, depth + 1) for x in v]
        return tuple(out) if isinstance(v, tuple) else out
    if v is None or isinstance(v, (str, bytes, bool, int, float, complex)):
        return v
    return "<" + type(v).__name__ + ">"


def decode(mod, data):
    try:
        obj = torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as e:
        text = str(e).strip()
        first = text.splitlines()[0][:160] if text else ""
        return {"ok": False, "error": type(e).__name__ + ": " + first}
    return {"ok": True, "value": _plain(obj)}
'''


def declared_size_problem(data: bytes) -> str | None:
    """Why the archive's declared sizes do not fit the bytes received (None when they do).

    Only the central directory is read; nothing is decompressed. A file that is
    not a zip archive (torch's legacy format) stores its tensors raw, so it
    cannot inflate, and is left to the decoder.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            infos = z.infolist()
    except zipfile.BadZipFile:
        return None
    except Exception as e:  # noqa: BLE001 - a damaged directory is the file's problem
        return f"its zip directory cannot be read ({type(e).__name__})"
    if len(infos) > MAX_ENTRIES:
        return f"it holds {len(infos)} archive entries"
    declared = sum(max(0, i.file_size) for i in infos)
    limit = MAX_INFLATION * len(data) + SLACK_BYTES
    if declared > limit:
        return (f"its archive declares {declared} bytes of content in a file of {len(data)} bytes "
                f"(more than {MAX_INFLATION} times its size: a compressed storage)")
    return None


def load_weights_only(ctx: CleanRunner, data: bytes, label: str = "torch.load(path, weights_only=True)"
                      ) -> tuple[Any, str | None]:
    """``torch.load(file, weights_only=True)`` of a student's file, decoded outside the judge.

    Returns ``(object, None)`` or ``(None, why it does not load)``.
    """
    if not isinstance(data, bytes):
        return None, f"the file's contents are {type(data).__name__}, not bytes"
    problem = declared_size_problem(data)
    if problem is not None:
        return None, f"the grader refused to decode it: {problem}"
    reply = ctx.clean_probe(DECODER, "decode", (data,), label=label)
    if not isinstance(reply, dict) or reply.get("ok") not in (True, False):
        return None, "the decoder's reply was malformed"
    if reply["ok"]:
        return reply.get("value"), None
    return None, str(reply.get("error"))[:300]
