"""Sandbox-side harness for `softmax_grad`: the calls, with gradient recording on or off as the judge asks.

Whether gradient recording was off during a call exists only in the student's process (torch.enable_grad()
inside the function undoes the judge's no_grad()), so the graded values are computed with recording on and
inputs that do not require grad; the no_grad() run is advice worth 0 points (issue 43)."""

import contextlib

import torch


def grads_many(mod, cases, no_grad=False):
    fn = mod.softmax_ce_grad
    out = []
    for logits, target in cases:
        try:
            with torch.no_grad() if no_grad else contextlib.nullcontext():
                value = fn(logits, target)
            out.append({"value": value, "logits": logits, "target": target})
        except NotImplementedError:
            raise
        except Exception as e:
            out.append({"error": f"{type(e).__name__}: {e}", "logits": logits, "target": target})
    return out
