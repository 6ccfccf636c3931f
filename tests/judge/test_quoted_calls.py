"""Issue 44, item 5: what the feedback quotes is the call that happened.

A quote such as ``shares_storage(x, x[1])`` is pasted by a student into a notebook. There, ``x[1]._base is x``
and ``(x, x)`` names one object; the sandbox must receive the same call, not separate tensors on one storage.
"""

from __future__ import annotations

import importlib.util
import json
import struct

import pytest
import torch

from autograder.judge.feedback import passed, quote
from autograder.sandbox.client import Sandbox, SandboxConfig
from autograder.sandbox.wire import WireError, crosses_exactly, pack, unpack
from tests.helpers import ROOT

VIEWS_SUITE = ROOT / "solutions" / "pytorch-fundamentals" / "views" / "test_hidden.py"

# What a student's function can observe about its two arguments, beyond their values.
FACTS = '''
def facts(a, b):
    root = lambda t: t if t._base is None else t._base
    return {
        "same_object": a is b,
        "a_views_b": a._base is b,
        "b_views_a": b._base is a,
        "same_root": root(a) is root(b),
        "a_is_view": a._base is not None,
        "b_is_view": b._base is not None,
        "same_storage": a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr(),
        "geometry": [tuple(a.shape), a.stride(), a.storage_offset(), tuple(b.shape), b.stride(),
                     b.storage_offset()],
    }
'''


def _facts(a, b):
    ns: dict = {}
    exec(FACTS, ns)  # noqa: S102 - our own source, run as the sandbox runs it
    return ns["facts"](a, b)


def _suite():
    spec = importlib.util.spec_from_file_location("views_hidden_for_quotes", VIEWS_SUITE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pasted(label: str, z: torch.Tensor):
    """The quoted call pasted into a fresh interpreter after ``x, y, z`` are built as the suite builds them."""
    torch.manual_seed(0)  # as the cases were built: a boolean mask's shape depends on the values
    ns = {"torch": torch, "x": torch.randn(4, 5), "y": torch.randn(3, 4, 2, dtype=torch.float64), "z": z}
    return eval(_balanced(label), ns)  # noqa: S307 - the suite's own labels


def _balanced(text: str) -> str:
    """The leading ``(...)`` of a label such as ``"(x[1:, 1:], x[:3, :4]) (same shape)"``."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return text[: i + 1]
    return text


def test_one_object_named_twice_is_one_object_and_a_view_keeps_its_base_across_the_wire():
    x = torch.randn(4, 5)
    z = torch.arange(7)
    _, (a, b, c, d, e, f) = unpack(pack({}, [x, x[1], x, x.T, z[5:], z[:2]]))
    assert c is a and b._base is a and d._base is a
    assert e._base is f._base and e._base is not None and e._base.shape == (7,)
    assert torch.equal(b, x[1]) and b.storage_offset() == 5 and d.stride() == (1, 5)
    b += 100  # still one storage: a write through the view shows in its base
    assert a[1, 0] == x[1, 0] + 100
    # the base of a view seen first, then the base itself: one object
    _, (v, base) = unpack(pack({}, [x[2], x]))
    assert v._base is base


def test_a_forged_view_whose_base_is_another_storage_is_refused():
    x, y = torch.randn(3), torch.randn(3)
    data = pack({}, [x, y[1:]])
    prefix = struct.Struct("!4sIQ")
    magic, hlen, blen = prefix.unpack_from(data)
    doc = json.loads(data[prefix.size: prefix.size + hlen])
    view = doc["payload"][1]
    view["base"] = {"$": "same", "obj": 0}  # x's object, on another storage
    head = json.dumps(doc).encode()
    forged = prefix.pack(magic, len(head), blen) + head + data[prefix.size + hlen:]
    with pytest.raises(WireError, match="different storages|view base"):
        unpack(forged)


def test_every_quoted_shares_storage_call_pasted_in_a_notebook_is_what_the_sandbox_received(server):
    """The views suite's quotes, pasted into a fresh interpreter, give the facts its sandbox call saw."""
    suite = _suite()
    torch.manual_seed(0)
    cases = [(c, torch.arange(7)) for c in suite._views_cases()]
    torch.manual_seed(0)
    cases += [(c, torch.zeros(3)) for c in suite._distinct_cases()]
    sb = Sandbox(server, SandboxConfig())
    try:
        sb.request("exec", FACTS, cell=1, timeout=10)
        _, fn = sb.request("getattr", target=None, name="facts", timeout=10)
        for (label, a, b), z in cases:
            assert quote(label, a, b) == label  # every one of these calls can be rebuilt exactly
            _, seen = sb.request("call", ([a, b], {}), target=fn.id, timeout=10)
            here = _facts(*_pasted(label, z))
            assert seen == here, (label, seen, here)
    finally:
        sb.kill()


def test_a_call_the_far_side_cannot_rebuild_is_quoted_as_what_was_passed():
    x = torch.randn(4, 5, dtype=torch.complex64)
    conj = x.conj()  # crosses resolved (a copy): no longer a view of x
    assert crosses_exactly(x) and crosses_exactly(x[1]) and not crosses_exactly(conj)
    said = quote("(x, x.conj())", x, conj)
    assert "x.conj()" not in said
    assert passed(conj) in said and "strides (5, 1)" in said and "storage offset 0" in said
