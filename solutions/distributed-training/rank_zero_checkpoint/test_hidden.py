"""Hidden suite for rank_zero_checkpoint (contract: distributed-training, section 4).

Who wrote is observed from the files (each rank gets its own path in that
test); whether a rank returned before the file was complete is what each rank
saw right after returning while rank 0 was held back, before it could write,
until the others had looked (or had waited `wait` seconds inside the call);
the resumed training (on a file the save has finished, whatever the save's
barrier did) is compared with the uninterrupted run computed here, in the
judge (and with the runs that forgetting the optimizer state, or not loading
at all, would give). No verdict depends on how the machine schedules the ranks.
"""
import hashlib

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.judge import check, describe, fail, rank_values, ranks_timeout
from autograder.judge.conventions import check_observed, settings_probe

LR, MOMENTUM = 0.05, 0.9
WAIT = 1.5  # how long rank 0 is held for a rank still inside save_on_rank_zero (in a barrier, as it should be)


def _spec(seed, world_size, before=3, after=3, epoch=7):
    g = torch.Generator().manual_seed(seed)
    d, h, c = 3, 5, 2

    def weights():
        return [torch.randn(h, d, generator=g, dtype=torch.float64), torch.randn(h, generator=g, dtype=torch.float64),
                torch.randn(c, h, generator=g, dtype=torch.float64), torch.randn(c, generator=g, dtype=torch.float64)]

    return {"sizes": [d, h, c], "w0": weights(), "w_other": weights(),
            "X": torch.randn(16, d, generator=g, dtype=torch.float64),
            "Y": torch.randn(16, c, generator=g, dtype=torch.float64),
            "lr": LR, "momentum": MOMENTUM, "before": before, "after": after, "epoch": epoch,
            "world_size": world_size, "wait": 0.0}


def _build(spec, weights):
    d, h, c = spec["sizes"]
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    return model, torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)


def _train(model, opt, spec, steps):
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(spec["X"]), spec["Y"]).backward()
        opt.step()


def _flat(ts):
    return torch.cat([t.reshape(-1) for t in ts])


def _runs(spec):
    """The uninterrupted run, and what two known mistakes would give, all computed here."""
    model, opt = _build(spec, spec["w0"])
    _train(model, opt, spec, spec["before"])
    saved = [p.detach().clone() for p in model.parameters()]
    _train(model, opt, spec, spec["after"])
    right = _flat(model.parameters()).detach()
    model, opt = _build(spec, saved)  # weights restored, momentum buffers lost
    _train(model, opt, spec, spec["after"])
    fresh_optimizer = _flat(model.parameters()).detach()
    model, opt = _build(spec, spec["w_other"])  # nothing restored at all
    _train(model, opt, spec, spec["after"])
    not_loaded = _flat(model.parameters()).detach()
    return right, fresh_optimizer, not_loaded


@pytest.mark.rules("one_writer")
@pytest.mark.points(2.5)
def test_only_global_rank_zero_writes(sandbox):
    """Only global rank 0 writes the checkpoint (3 ranks, 2 per node)"""
    spec = _spec(41, 3)
    report = sandbox.probe("who_writes", spec, ranks_timeout())
    rank_values(report, 3, "save_on_rank_zero")
    files = sorted(_written(sandbox, report))  # listed by the judge, from outside the ranks and the sandbox
    writers = sorted(int(f[len("ckpt-rank"):-3]) for f in files
                     if isinstance(f, str) and f.startswith("ckpt-rank") and f.endswith(".pt")
                     and f[len("ckpt-rank"):-3].isdigit())
    if writers == [0]:
        return
    msg = f"Each rank was given its own path; afterwards files existed for ranks {writers}, expected rank 0 only."
    if not writers or 0 not in writers:
        fail(msg + " Global rank 0 (dist.get_rank() == 0) must write the file at the path it was given.",
             misconception="no_file")
    if writers == [0, 2]:
        fail(msg + " Ranks 0 and 2 are the first process of their node (LOCAL_RANK 0): use the global rank, "
             "dist.get_rank(), not LOCAL_RANK, or every node writes its own copy.", misconception="local_rank")
    if writers == [0, 1, 2]:
        fail(msg + " Every rank wrote: guard the save with `if dist.get_rank() == 0:`.",
             misconception="every_rank_writes")
    fail(msg)


def _kind(value):
    """What a value that crossed as itself is, in words ("<Name>" is the probe's word for any other type)."""
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return f"a {value[1:-1][:60]} object"
    return describe(value)


def _written(sandbox, report):
    """{name: bytes} of the files in the probe's folder, listed and read by the judge (never inside the sandbox)."""
    folder = report.get("folder") if isinstance(report, dict) else None
    check(isinstance(folder, str), "The grader's report of the checkpoint folder came back malformed.")
    return sandbox.scratch_files(folder)["files"]


def _final_file(sandbox, report):
    """The file's bytes as they were after every rank returned (None when there was none)."""
    return _written(sandbox, report).get("ckpt.pt")


@pytest.mark.rules("one_writer")
@pytest.mark.points(1)
def test_file_loads_with_weights_only(sandbox):
    """The checkpoint loads with torch.load(path, weights_only=True)"""
    spec = _spec(42, 2)
    report = sandbox.probe("complete_on_return", spec, ranks_timeout())
    rank_values(report, 2, "save_on_rank_zero")
    data = _final_file(sandbox, report)
    check(data is not None, "save_on_rank_zero(path, ...) did not create a file at `path` on rank 0.",
          misconception="no_file")
    # decoded outside the student's processes: a sandbox that never ran student code (and never the judge)
    _, error = sandbox.load_weights_only(data)
    check(error is None, f"torch.load(path, weights_only=True) refused your checkpoint ({error}). Save state dicts, "
          "tensors and plain numbers (model.state_dict(), optimizer.state_dict(), int(epoch)), never the model or "
          "optimizer objects themselves.", misconception="weights_only")


@pytest.mark.rules("complete_before_return")
@pytest.mark.points(0)
@pytest.mark.in_process
def test_no_rank_returns_before_the_file_is_complete(sandbox):
    """No rank returns before rank 0's file is complete"""
    spec = dict(_spec(43, 3), wait=WAIT)
    report = sandbox.probe("complete_on_return", spec, ranks_timeout())
    outs = rank_values(report, 3, "save_on_rank_zero")
    early = [r for r, out in enumerate(outs) if not (isinstance(out, dict) and out.get("exists") is True)]
    check(not early or _final_file(sandbox, report) is not None, "save_on_rank_zero(path, ...) did not create a "
          "file at `path` on rank 0, so no rank found it after returning.", misconception="no_file")  # not a race
    check(not early, f"With rank 0 slow to save, {'ranks' if len(early) > 1 else 'rank'} "
          f"{', '.join(map(str, early))} returned before the file existed: a rank that goes on to load it would "
          "fail. Put a dist.barrier() after rank 0's save, where every rank (rank 0 included) calls it.",
          misconception="no_barrier")
    data = _final_file(sandbox, report)
    final = None if data is None else hashlib.sha256(data).hexdigest()
    torn = [r for r, out in enumerate(outs) if out.get("digest") != final] if final else []
    check(not torn, f"Rank {torn[0] if torn else ''} found the file right after returning, but not yet complete "
          "(its bytes differ from the finished file's): wait until rank 0 has finished writing.",
          misconception="no_barrier")


@pytest.mark.rules("resume")
@pytest.mark.points(5)
def test_every_rank_continues_exactly(sandbox):
    """After resume, every rank continues exactly like the uninterrupted run"""
    spec = _spec(44, 2)
    outs = rank_values(sandbox.probe("resume_run", spec, ranks_timeout()), 2, "save_on_rank_zero / resume")
    right, fresh_optimizer, not_loaded = _runs(spec)
    params = [_flat(out["params"]) for out in outs]
    # NaN on every rank is the same state on every rank (torch.equal says it differs): not "ranks differ"
    check(all(p.shape == params[0].shape and torch.allclose(p, params[0], rtol=0, atol=0, equal_nan=True)
              for p in params),
          "After resuming and training on, the ranks' parameters differ from each other: every rank must load "
          "the same file, weights and optimizer state.", misconception="ranks_differ")
    for rank, p in enumerate(params):
        if p.shape == right.shape and torch.allclose(p, right, rtol=1e-12, atol=1e-14):
            continue
        msg = (f"Rank {rank}: trained {spec['before']} steps, saved, rebuilt with other weights, resumed and "
               f"trained {spec['after']} more steps, the parameters differ from the uninterrupted run's.")
        if p.shape == right.shape and torch.allclose(p, fresh_optimizer, rtol=1e-9, atol=1e-12):
            fail(msg + " They match a run whose optimizer restarted empty: save and load optimizer.state_dict() "
                 "too (SGD's momentum buffers live there).", misconception="no_optimizer_state")
        if p.shape == right.shape and torch.allclose(p, not_loaded, rtol=1e-9, atol=1e-12):
            fail(msg + " They match a run that never loaded the checkpoint: load the state dicts into the model "
                 "and optimizer you are given (and check what load_state_dict reports; strict=False hides "
                 "missing keys).", misconception="not_loaded")
        fail(msg)


@pytest.mark.rules("resume")
@pytest.mark.points(1)
def test_resume_returns_the_epoch_as_int(sandbox):
    """resume returns the saved epoch as a Python int on every rank"""
    spec = _spec(45, 3, before=1, after=0, epoch=12)
    outs = rank_values(sandbox.probe("resume_run", spec, ranks_timeout()), 3, "save_on_rank_zero / resume")
    for rank, out in enumerate(outs):
        check(type(out["epoch"]) is int, f"Rank {rank}'s resume returned {_kind(out['epoch'])}; return the "
              "saved epoch as a Python int (int(...)).", misconception="epoch_type")
        if out["epoch"] != 12:
            fail(f"The checkpoint was saved with epoch=12, but rank {rank}'s resume returned {out['epoch']!r}.",
                 misconception="epoch_off_by_one" if out["epoch"] in (11, 13) else "")


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_save_leaves_model_optimizer_and_settings_as_found(sandbox):
    """On every rank, save_on_rank_zero leaves the model, the optimizer and torch's global settings as found"""
    spec = _spec(45, 2)
    spec["probe"] = settings_probe("save_on_rank_zero")
    report = sandbox.probe("who_writes", spec, ranks_timeout())
    for rank, out in enumerate(rank_values(report, 2, "save_on_rank_zero")):
        check_observed(out["seen"], spec["probe"], call=f"save_on_rank_zero(path, model, optimizer, epoch) on rank "
                                                        f"{rank} of 2")
