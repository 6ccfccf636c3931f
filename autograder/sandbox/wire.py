"""The wire format between judge and sandbox.

Reading a message must never run code: no pickle, no ``torch.load`` of
untrusted bytes. A message is a JSON header plus raw byte blobs. Tensors travel
as (storage blob, dtype, shape, stride, offset), so tensors that share storage
inside one message still share it after decoding: that is how the judge sees
views and in-place writes without trusting the sandbox's word about them.

A call crosses as it was made (feedback quotes it, and a student pastes the quote
into a notebook): one tensor object named twice in a message is decoded as one
object (``{"$": "same", "obj": k}``, the k-th tensor decoded), and a view crosses
with its ``_base``, rebuilt as a real view of the decoded base (``base.as_strided``),
so ``x[1]._base is x`` holds on the far side too. :func:`crosses_exactly` says when
a tensor cannot be rebuilt so (a CUDA tensor, a conjugate view); a quote then
names its shape, strides and offset (``judge.feedback.passed``).

Every JSON object inside the payload is a tagged node (``{"$": kind, ...}``);
user dicts are encoded as tagged lists of pairs, so no user data can be
mistaken for a tag. Types survive the trip: a ``numpy.int64`` arrives as a
``numpy.int64``, a bool as a bool, a tuple as a tuple; the judge decides what
it accepts.

The judge's memory is bounded by what the sandbox actually sends, never by
what it declares: a frame's buffer grows as bytes arrive, each storage maps to
a blob of its own (one blob, one decoded copy), storages are decoded only when
a tensor uses them, and a message may hold at most ``MAX_BODY`` bytes of blobs
and ``MAX_HEADER`` bytes of JSON.
"""

from __future__ import annotations

import json
import math
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

import numpy as np
import torch

from autograder.errors import PeerClosed, RecvDeadlinePassed, Unencodable, WireError

# What a graded value can need: the largest value an exercise returns (a checkpoint's
# bytes, a data set's tensors) is a few MiB. 256 MiB of raw tensor bytes is a float32
# tensor of 64 million elements; 16 MiB of JSON is a Python list of about a million
# floats. Anything larger is refused before it is read, in both directions.
MAX_HEADER = 16 * 2**20
MAX_BODY = 256 * 2**20
MAX_BLOBS = 1 << 20
RECV_CHUNK = 1 << 20  # a frame's buffer grows by at most this much per read
MAX_DEPTH = 64
_PREFIX = struct.Struct("!4sIQ")
_MAGIC = b"TGW1"
# Sent by the sandbox's init before "ready", with its scratch folder's descriptor (SCM_RIGHTS), before any
# student code runs: the judge then reads files the student's processes wrote from outside them.
SCRATCH_MARK = b"TGSCRATCH1"

# Only these dtypes cross the boundary; anything else is refused on both sides.
TENSOR_DTYPES: dict[str, torch.dtype] = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
    )
}
NUMPY_KINDS = set("biufc")
ALLOWED_TENSOR_TYPES: tuple[type, ...] = (torch.Tensor, torch.nn.Parameter)


@dataclass(frozen=True)
class HandleRef:
    """A reference to an object that lives in the sandbox (decoded form)."""

    id: int
    type: str = ""
    mro: tuple[str, ...] = ()
    callable: bool = False


def _plain(t: torch.Tensor) -> bool:
    """A tensor that crosses as its own bytes: allowed type, dense, allowed dtype, on the CPU, nothing lazy."""
    return (type(t) in ALLOWED_TENSOR_TYPES and t.layout == torch.strided and t.device.type == "cpu"
            and str(t.dtype).removeprefix("torch.") in TENSOR_DTYPES and not (t.is_conj() or t.is_neg()))


def _view_crosses(t: torch.Tensor) -> bool:
    """True when ``t`` is a view whose base crosses with it, so that the far side rebuilds the view."""
    base = t._base
    # a view rebound onto other memory (x.set_(...)) keeps its _base but not its base's storage
    return (base is not None and _plain(t) and _plain(base) and base._base is None
            and base.dtype == t.dtype and t.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())


def crosses_exactly(t: torch.Tensor) -> bool:
    """True when the far side receives ``t`` as it is: same bytes, geometry, and (for a view) ``_base``.

    False for what is rebuilt approximately: a tensor not on the CPU (copied there), a conjugate or
    negative view (resolved), or a view whose base cannot cross. A quote of such a call names what was
    passed (shape, strides, offset) rather than the expression that made it.
    """
    return _plain(t) and (t._base is None or _view_crosses(t))


def tensor_meta(t: torch.Tensor) -> dict[str, Any]:
    return {
        "device": str(t.device),
        "requires_grad": bool(t.requires_grad),
        "is_leaf": bool(t.is_leaf),
        "grad_fn": type(t.grad_fn).__name__ if t.grad_fn is not None else None,
        "dtype": str(t.dtype).removeprefix("torch."),
    }


class Encoder:
    """Turns a value tree into (JSON-able tree, blobs).

    ``fallback`` decides what happens to anything that is not a plain value:
    the sandbox turns it into a handle, the judge refuses it.
    """

    def __init__(self, fallback: Callable[[Any], dict] | None = None) -> None:
        self.fallback = fallback
        self.blobs: list[bytes] = []
        self.storages: list[dict] = []
        self._storage_index: dict[tuple[int, int, str], int] = {}
        self._keep: list[Any] = []  # keeps cpu copies alive so data_ptrs stay unique
        # id of each tensor object already sent -> its object number (the order both sides decode in)
        self._objects: dict[int, int] = {}

    def blob(self, data: bytes) -> int:
        self.blobs.append(data)
        return len(self.blobs) - 1

    def encode(self, value: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise Unencodable("the value is nested too deeply to be sent")
        if isinstance(value, np.generic):
            return self._np_scalar(value, depth)
        if isinstance(value, np.dtype):
            return self._np_dtype(value, "npdtype")
        if isinstance(value, type) and issubclass(value, np.generic):
            return self._np_dtype(np.dtype(value), "nptype")
        if value is None or isinstance(value, bool | str):
            return value
        # exact types only: a subclass of int or float (one whose __name__ lies, or whose operators do)
        # is not a number the judge can trust, so it crosses as what it is, never as a plain number
        if type(value) is int:
            return value
        if type(value) is float:
            if math.isfinite(value):
                return value
            return {"$": "float", "v": repr(value)}
        if isinstance(value, torch.Tensor):
            return self._tensor(value)
        if isinstance(value, np.ndarray):
            return self._ndarray(value)
        if isinstance(value, complex):
            return {"$": "complex", "re": self.encode(value.real), "im": self.encode(value.imag)}
        if isinstance(value, bytes | bytearray):
            return {"$": "bytes", "blob": self.blob(bytes(value))}
        if isinstance(value, torch.Size):
            return {"$": "size", "items": [int(v) for v in value]}
        if type(value) is list:
            return [self.encode(v, depth + 1) for v in value]
        if type(value) is tuple:
            return {"$": "tuple", "items": [self.encode(v, depth + 1) for v in value]}
        if type(value) is dict:
            return {
                "$": "dict",
                "items": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()],
            }
        if isinstance(value, torch.dtype):
            return {"$": "dtype", "name": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"$": "device", "name": str(value)}
        if isinstance(value, slice):
            return {
                "$": "slice",
                "items": [self.encode(v, depth + 1) for v in (value.start, value.stop, value.step)],
            }
        if value is Ellipsis:
            return {"$": "ellipsis"}
        if isinstance(value, HandleRef):
            return {"$": "handle", "id": value.id}
        if self.fallback is not None:
            return self.fallback(value)
        raise Unencodable(f"a {type(value).__name__} cannot be sent to the sandbox")

    def _tensor(self, t: torch.Tensor) -> dict:
        """A tensor node; the same object again is a reference to it, and a view carries its base."""
        seen = self._objects.get(id(t))
        if seen is not None:
            return {"$": "same", "obj": seen}
        base = t._base if _view_crosses(t) else None
        base_node = self._tensor(base) if base is not None else None
        node = self._tensor_node(t)
        self._keep.append(t)  # the object stays alive while its id names it
        self._objects[id(t)] = len(self._objects)
        if base_node is not None:
            node["base"] = base_node
        return node

    def _tensor_node(self, t: torch.Tensor) -> dict:
        if type(t) not in ALLOWED_TENSOR_TYPES:
            raise Unencodable(f"got a {type(t).__name__}, a subclass of torch.Tensor; return a plain torch.Tensor")
        if t.layout != torch.strided:
            raise Unencodable(f"got a tensor with layout {t.layout}; return a dense tensor")
        dtype = str(t.dtype).removeprefix("torch.")
        if dtype not in TENSOR_DTYPES:
            raise Unencodable(f"tensors of dtype {t.dtype} cannot be graded")
        meta = tensor_meta(t)
        t = t.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.is_conj() or t.is_neg():
            t = t.resolve_conj().resolve_neg()
        self._keep.append(t)
        storage = t.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes(), str(t.device))
        sid = self._storage_index.get(key)
        if sid is None:
            raw = torch.empty(0, dtype=torch.uint8).set_(storage)
            blob = self.blob(raw.numpy().tobytes())
            self.storages.append({"blob": blob, "nbytes": storage.nbytes()})
            sid = len(self.storages) - 1
            self._storage_index[key] = sid
        return {
            "$": "tensor",
            "storage": sid,
            "dtype": dtype,
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "offset": t.storage_offset(),
            "meta": meta,
        }

    def _np_scalar(self, v: np.generic, depth: int) -> Any:
        kind = v.dtype.kind
        if kind == "U":
            return str(v)
        if kind == "S":
            return self.encode(bytes(cast(np.bytes_, v)), depth + 1)  # kind S: np.bytes_, a bytes
        if kind not in NUMPY_KINDS or v.dtype.hasobject:
            if self.fallback is not None:
                return self.fallback(v)
            raise Unencodable(f"NumPy values of dtype {v.dtype} cannot be graded")
        return {"$": "npscalar", "dtype": v.dtype.str, "hex": v.tobytes().hex()}

    def _np_dtype(self, d: np.dtype, tag: str) -> Any:
        if d.kind not in NUMPY_KINDS or d.hasobject:
            if self.fallback is not None:
                return self.fallback(d if tag == "npdtype" else d.type)
            raise Unencodable(f"the NumPy dtype {d} cannot be sent")
        return {"$": tag, "dtype": d.str}

    def _ndarray(self, a: np.ndarray) -> dict:
        if a.dtype.kind not in NUMPY_KINDS or a.dtype.hasobject:
            raise Unencodable(f"NumPy arrays of dtype {a.dtype} cannot be graded")
        a = np.ascontiguousarray(a)
        return {"$": "ndarray", "dtype": a.dtype.str, "shape": list(a.shape), "blob": self.blob(a.tobytes())}


class Decoder:
    """Rebuilds a value tree from (JSON tree, blobs), validating everything.

    Each blob is claimed by at most one storage or value, so the decoded bytes
    never exceed the received ones (a table listing one blob a thousand times
    is refused, not copied a thousand times). Storages are built when a tensor
    first uses them; every view of one storage shares that single copy.
    """

    def __init__(self, header: dict, blobs: list[memoryview], resolve_handle: Callable[[dict], Any]):
        self.blobs = blobs
        self.resolve_handle = resolve_handle
        storages = header.get("storages", [])
        if not isinstance(storages, list) or len(storages) > len(blobs):
            raise WireError("bad storages")
        self._claimed: set[int] = set()
        self._storage_blob: list[int] = []
        for s in storages:
            self._storage_blob.append(self._claim(s.get("blob") if isinstance(s, dict) else None))
        self.storages: dict[int, torch.UntypedStorage] = {}
        self._objects: list[torch.Tensor] = []  # every tensor decoded, in order: what "same" nodes name

    def _claim(self, i: Any) -> int:
        if type(i) is not int or not 0 <= i < len(self.blobs):
            raise WireError("bad blob reference")
        if i in self._claimed:
            raise WireError("a blob is referenced twice")
        self._claimed.add(i)
        return i

    def _blob(self, i: Any) -> memoryview:
        return self.blobs[self._claim(i)]

    def _storage(self, sid: int) -> torch.UntypedStorage:
        storage = self.storages.get(sid)
        if storage is None:
            data = self.blobs[self._storage_blob[sid]]
            try:
                buf = torch.empty(len(data), dtype=torch.uint8)
            except RuntimeError:  # torch's CPU allocator reports a refused allocation this way
                raise MemoryError(f"cannot allocate {len(data)} bytes for a tensor storage") from None
            if len(data):
                buf.numpy()[:] = np.frombuffer(data, dtype=np.uint8)
            storage = self.storages[sid] = buf.untyped_storage()
        return storage

    def decode(self, node: Any, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            raise WireError("message nested too deeply")
        if node is None or isinstance(node, bool | int | float | str):
            return node
        if isinstance(node, list):
            return [self.decode(v, depth + 1) for v in node]
        if not isinstance(node, dict):
            raise WireError("bad node")
        kind = node.get("$")
        if kind == "tuple":
            return tuple(self.decode(v, depth + 1) for v in _list(node["items"]))
        if kind == "dict":
            return self._dict(node, depth)
        if kind == "float":
            v = node.get("v")
            if v not in ("nan", "inf", "-inf"):
                raise WireError("bad float")
            return float(v)
        if kind == "complex":
            return complex(float(self.decode(node["re"], depth + 1)), float(self.decode(node["im"], depth + 1)))
        if kind == "bytes":
            return bytes(self._blob(node.get("blob")))
        if kind == "size":
            items = _list(node["items"])
            if not _ints(items) or any(v < 0 for v in items) or len(items) > 64:
                raise WireError("bad size")
            return torch.Size(items)
        if kind == "npscalar":
            return _np_scalar(node)
        if kind == "npdtype":
            return _np_dtype(node.get("dtype"))
        if kind == "nptype":
            return _np_dtype(node.get("dtype")).type
        if kind == "tensor":
            base = self._base(node.get("base"), depth)
            t = self._tensor(node, base)
            self._objects.append(t)
            return t
        if kind == "same":
            k = node.get("obj")
            if type(k) is not int or not 0 <= k < len(self._objects):
                raise WireError("bad tensor reference")
            return self._objects[k]
        if kind == "ndarray":
            return self._ndarray(node)
        if kind == "dtype":
            name = node.get("name")
            if name not in TENSOR_DTYPES:
                raise WireError("bad dtype")
            return TENSOR_DTYPES[name]
        if kind == "device":
            return torch.device(str(node.get("name")))
        if kind == "slice":
            items = [self.decode(v, depth + 1) for v in _list(node["items"])]
            if len(items) != 3 or not all(v is None or type(v) is int for v in items):
                raise WireError("bad slice")
            return slice(*items)
        if kind == "ellipsis":
            return Ellipsis
        if kind == "handle":
            return self.resolve_handle(node)
        raise WireError(f"unknown node kind {kind!r}")

    def _dict(self, node: dict, depth: int) -> dict:
        out = {}
        for pair in _list(node["items"]):
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("bad dict item")
            key = self.decode(pair[0], depth + 1)
            try:
                hash(key)
            except TypeError:
                raise WireError("unhashable dict key") from None
            out[key] = self.decode(pair[1], depth + 1)
        return out

    def _base(self, node: Any, depth: int) -> torch.Tensor | None:
        """The decoded base of a view node (None when it has none); it is a tensor, never itself a view."""
        if node is None:
            return None
        if not isinstance(node, dict) or node.get("$") not in ("tensor", "same") or "base" in node:
            raise WireError("bad view base")
        base = self.decode(node, depth + 1)
        if not isinstance(base, torch.Tensor) or base._base is not None:
            raise WireError("bad view base")
        return base

    def _tensor(self, node: dict, base: torch.Tensor | None = None) -> torch.Tensor:
        name = node.get("dtype")
        dtype = TENSOR_DTYPES.get(name) if isinstance(name, str) else None
        sid = node.get("storage")
        shape, stride, offset = node.get("shape"), node.get("stride"), node.get("offset")
        if dtype is None or type(sid) is not int or not 0 <= sid < len(self._storage_blob):
            raise WireError("bad tensor header")
        if not (_ints(shape) and _ints(stride) and len(shape) == len(stride) and type(offset) is int):
            raise WireError("bad tensor geometry")
        if any(v < 0 for v in shape) or any(v < 0 for v in stride) or offset < 0 or len(shape) > 32:
            raise WireError("bad tensor geometry")
        storage = self._storage(sid)
        itemsize = torch.empty(0, dtype=dtype).element_size()
        if math.prod(shape) > 0:
            last = offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
            if (last + 1) * itemsize > storage.nbytes():
                raise WireError("tensor geometry exceeds its storage")
        t = torch.empty(0, dtype=dtype).set_(storage, offset, shape, stride)
        if base is not None:
            if base.untyped_storage().data_ptr() != storage.data_ptr():
                raise WireError("a view and its base on different storages")
            t = _view_of(base, t)
        meta = node.get("meta")
        if isinstance(meta, dict):
            # what the sandbox reported about its tensor, kept beside the copy (judge.feedback.remote_meta reads it)
            t.remote_meta = {  # type: ignore[attr-defined]
                k: meta.get(k) for k in ("device", "requires_grad", "is_leaf", "grad_fn", "dtype")
            }
        return t

    def _ndarray(self, node: dict) -> np.ndarray:
        dtype = _np_dtype(node.get("dtype"))
        shape = node.get("shape")
        if not _ints(shape) or any(v < 0 for v in shape) or len(shape) > 32:
            raise WireError("bad array header")
        data = self._blob(node.get("blob"))
        if len(data) != math.prod(shape) * dtype.itemsize:
            raise WireError("array size mismatch")
        return np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)


def _view_of(base: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``t`` (already checked against the storage) rebuilt as a real view of ``base``: ``_base`` is base.

    torch gives a view the dtype of its base (a dtype view, ``x.view(torch.int32)``, is a base of its own);
    a node that says otherwise, or a geometry torch refuses, leaves ``t`` on the same storage without a base.
    """
    if base.dtype != t.dtype:
        return t
    try:
        return base.as_strided(t.shape, t.stride(), t.storage_offset())
    except RuntimeError:
        return t


def _np_dtype(name: Any) -> np.dtype:
    """A plain numeric NumPy dtype from its ``dtype.str``; anything else is malformed."""
    if not isinstance(name, str) or len(name) > 8:
        raise WireError("bad NumPy dtype")
    try:
        dtype = np.dtype(name)
    except (TypeError, ValueError):
        raise WireError("bad NumPy dtype") from None
    if dtype.kind not in NUMPY_KINDS or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise WireError("bad NumPy dtype")
    return dtype


def _np_scalar(node: dict) -> Any:
    dtype = _np_dtype(node.get("dtype"))
    raw = node.get("hex")
    if not isinstance(raw, str) or len(raw) != 2 * dtype.itemsize:
        raise WireError("bad NumPy scalar")
    try:
        return np.frombuffer(bytes.fromhex(raw), dtype=dtype)[0]
    except ValueError:
        raise WireError("bad NumPy scalar") from None


def _list(v: Any) -> list:
    if not isinstance(v, list):
        raise WireError("expected a list")
    return v


def _ints(v: Any) -> TypeGuard[list[int]]:
    return isinstance(v, list) and all(type(x) is int for x in v)


def pack(header: dict, payload: Any = None, fallback: Callable[[Any], dict] | None = None) -> bytes:
    """Encode a message. ``header`` holds plain JSON control fields."""
    enc = Encoder(fallback)
    body = enc.encode(payload)
    doc = dict(header)
    doc["payload"] = body
    doc["storages"] = enc.storages
    doc["blobs"] = [len(b) for b in enc.blobs]
    head = json.dumps(doc, allow_nan=False).encode()
    total = sum(len(b) for b in enc.blobs)
    if len(head) > MAX_HEADER or total > MAX_BODY:
        raise Unencodable(
            f"the value is too large to be graded ({total / 2**20:.0f} MiB of data, {len(head) / 2**20:.1f} MiB "
            f"of structure; the limits are {MAX_BODY // 2**20} MiB and {MAX_HEADER // 2**20} MiB): "
            "return only what the exercise asks for"
        )
    return _PREFIX.pack(_MAGIC, len(head), total) + head + b"".join(enc.blobs)


def unpack(data: bytes | bytearray, resolve_handle: Callable[[dict], Any] | None = None) -> tuple[dict, Any]:
    """Decode a message produced by :func:`pack`; raises WireError on anything malformed."""
    view = memoryview(data).cast("B")
    if len(view) < _PREFIX.size:
        raise WireError("short message")
    magic, hlen, blen = _PREFIX.unpack_from(view)
    if magic != _MAGIC or hlen > MAX_HEADER or blen > MAX_BODY:
        raise WireError("bad message prefix")
    if len(view) != _PREFIX.size + hlen + blen:
        raise WireError("message length mismatch")
    try:
        doc = json.loads(bytes(view[_PREFIX.size : _PREFIX.size + hlen]))
    except (ValueError, RecursionError):
        raise WireError("bad message header") from None
    if not isinstance(doc, dict):
        raise WireError("bad message header")
    sizes = doc.pop("blobs", [])
    if not _ints(sizes) or any(s < 0 for s in sizes) or sum(sizes) != blen or len(sizes) > MAX_BLOBS:
        raise WireError("bad blob table")
    blobs: list[memoryview] = []
    pos = _PREFIX.size + hlen
    for s in sizes:
        blobs.append(view[pos : pos + s])
        pos += s

    def refuse(node: dict) -> Any:
        raise WireError("unexpected handle")

    dec = Decoder(doc, blobs, resolve_handle or refuse)
    try:
        payload = dec.decode(doc.pop("payload", None))
    except (KeyError, TypeError, ValueError, RecursionError) as e:
        if isinstance(e, WireError):
            raise
        raise WireError(f"malformed payload: {type(e).__name__}") from None
    doc.pop("storages", None)
    return doc, payload


# ---------------------------------------------------------------- framing over a socket


def send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(data)


def recv_frame(
    sock: socket.socket, deadline: float | None = None, on_idle: Callable[[], None] | None = None
) -> bytearray:
    """One whole message. Its buffer grows as bytes arrive, never to the size the prefix merely declares.

    ``on_idle`` is called about every IDLE_TICK seconds while nothing arrives (the
    judge checks there whether the sandbox's cgroup has had a process killed).
    """
    buf = bytearray()
    _recv_into(sock, buf, _PREFIX.size, deadline, on_idle)
    magic, hlen, blen = _PREFIX.unpack(buf)
    if magic != _MAGIC or hlen > MAX_HEADER or blen > MAX_BODY:
        raise WireError("bad message prefix")
    _recv_into(sock, buf, _PREFIX.size + hlen + blen, deadline, on_idle)
    return buf


IDLE_TICK = 0.25


def _recv_into(
    sock: socket.socket, buf: bytearray, n: int, deadline: float | None, on_idle: Callable[[], None] | None
) -> None:
    """Append to ``buf`` until it holds ``n`` bytes, reading at most RECV_CHUNK at a time."""
    while len(buf) < n:
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            raise RecvDeadlinePassed()
        if on_idle is not None:
            left = IDLE_TICK if left is None else min(left, IDLE_TICK)
        sock.settimeout(left)
        try:
            chunk = sock.recv(min(n - len(buf), RECV_CHUNK))
        except TimeoutError:
            if on_idle is not None:
                on_idle()
                continue
            raise RecvDeadlinePassed() from None
        except (ConnectionResetError, BrokenPipeError):
            raise PeerClosed() from None
        if not chunk:
            raise PeerClosed()
        buf += chunk
