"""Seeding torch once per test, on both sides, without ``torch.manual_seed``'s hidden cost.

``torch.manual_seed`` also seeds CUDA, XPU and MTIA. While such a device is not
initialised, each of the three queues its seed for later together with a
formatted traceback of the caller's stack (``traceback.format_stack``, source
lines read through linecache): under pytest about 1.5 ms per call, and the judge
and the sandbox seed before every test, some 110 times per submission. In a
torch built without any of those devices the queued seeds can never run, so
seeding the CPU generator (and a custom backend's, as ``torch.manual_seed``
does) is the same thing. A build with an accelerator takes ``torch.manual_seed``
itself, unchanged.
"""

from __future__ import annotations

import functools

import torch


@functools.cache
def cpu_only() -> bool:
    """True when this torch build has no device besides the CPU that ``torch.manual_seed`` would seed.

    Read from how torch was built (never by asking a driver, which could make a
    later fork unsafe); an API this torch lacks counts as "may have a device".
    """
    try:
        return not (
            torch.backends.cuda.is_built()
            or torch.backends.mps.is_built()
            or torch._C._has_xpu
            or torch._C._mtia_isBuilt()
            or hasattr(torch, torch._C._get_privateuse1_backend_name())
        )
    except AttributeError:
        return False


def manual_seed(seed: int) -> None:
    """``torch.manual_seed(seed)``: the same generators get the same seed, at a fraction of the cost."""
    if cpu_only():
        torch.default_generator.manual_seed(int(seed))
    else:
        torch.manual_seed(seed)
