"""Hidden suite for ddp_step (contract: distributed-training, section 1).

The probe runs the student's ddp_step on every rank of a real gloo group in
the sandbox and reports each rank's parameters, gradients and returned loss.
Every expected value is computed here, in float64, as one single-process SGD
step on the concatenated batch; so are the values the known mistakes would
give (summed or unweighted-averaged gradients, a step on the local gradient,
stale gradients), which name the misconception when a rank matches one.
"""
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.judge import check, describe, fail, group_left_alive, rank_values, ranks_timeout
from autograder.judge.conventions import check_observed, settings_probe

LR, MOMENTUM = 0.1, 0.9
RTOL, ATOL = 1e-10, 1e-12


def _spec(seed, sizes_per_rank, loss="mse", stale=False):
    g = torch.Generator().manual_seed(seed)
    d, h, c = 4, 6, 3
    weights = [torch.randn(h, d, generator=g, dtype=torch.float64),
               torch.randn(h, generator=g, dtype=torch.float64),
               torch.randn(c, h, generator=g, dtype=torch.float64),
               torch.randn(c, generator=g, dtype=torch.float64)]
    shards = []
    for k, n in enumerate(sizes_per_rank):
        x = torch.randn(n, d, generator=g, dtype=torch.float64) * (1 + k)  # shards differ in scale
        y = (torch.randint(0, c, (n,), generator=g) if loss == "cross_entropy"
             else torch.randn(n, c, generator=g, dtype=torch.float64))
        shards.append((x, y))
    spec = {"sizes": [d, h, c], "weights": weights, "shards": shards, "lr": LR, "momentum": MOMENTUM,
            "loss": loss, "stale": None}
    if stale:
        spec["stale"] = [torch.randn(w.shape, generator=g, dtype=torch.float64) for w in weights]
    return spec


def _model(spec):
    d, h, c = spec["sizes"]
    model = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, c)).double()
    with torch.no_grad():
        for p, w in zip(model.parameters(), spec["weights"]):
            p.copy_(w)
    return model


def _loss_fn(spec):
    return F.mse_loss if spec["loss"] == "mse" else F.cross_entropy


def _grad(spec, x, y):
    model = _model(spec)
    loss = _loss_fn(spec)(model(x), y)
    loss.backward()
    return [p.grad.clone() for p in model.parameters()], loss.item()


def _step(spec, grads):
    """Parameters after one SGD step (the suite's optimizer) with the given gradients, flattened."""
    model = _model(spec)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for p, gr in zip(model.parameters(), grads):
        p.grad = gr.clone()
    opt.step()
    return _flat([p.detach() for p in model.parameters()])


def _flat(ts):
    return torch.cat([t.reshape(-1).to(torch.float64) for t in ts])


def _close(a, b, rtol=RTOL, atol=ATOL):
    return a is not None and a.shape == b.shape and bool(torch.allclose(a, b, rtol=rtol, atol=atol))


def _along(v, direction):
    """Whether v is a nonzero multiple of direction (a step or gradient from one shard only, however scaled)."""
    if v is None or v.shape != direction.shape:
        return False
    c = float(v @ direction) / float(direction @ direction)
    return c != 0 and _close(v, c * direction, rtol=1e-8, atol=1e-10)


class Truth:
    """Everything the judge knows about one step: the right answer and the known wrong ones."""

    def __init__(self, spec):
        self.spec = spec
        xs = torch.cat([x for x, _ in spec["shards"]])
        ys = torch.cat([y for _, y in spec["shards"]])
        self.grad, self.loss = _grad(spec, xs, ys)
        self.params = _step(spec, self.grad)
        local = [_grad(spec, x, y) for x, y in spec["shards"]]
        self.local_grads = [g for g, _ in local]
        self.local_losses = [v for _, v in local]
        w = len(local)
        summed = [sum(gs) for gs in zip(*self.local_grads)]
        mean = [s / w for s in summed]
        self.summed, self.mean = summed, mean
        self.wrong = {
            "sum_not_mean": ("the gradients were summed across ranks but never divided: every rank stepped "
                             f"with about {w} times the right gradient", _step(spec, summed)),
            "unweighted_mean": ("the per-rank gradients were averaged with equal weights (divided by the world "
                                "size), but the shards have different sizes: weight each rank's gradient by its "
                                "number of examples (DistributedDataParallel's averaging has the same problem)",
                                _step(spec, mean)),
        }
        if spec["stale"] is not None:
            why = ("the gradients already in .grad before the call were added to the new ones (and combined "
                   "with them): clear them first (optimizer.zero_grad())")
            for k, scale in ((1, 1.0), (2, float(w))):  # stale gradient kept once, or summed over the ranks
                self.wrong[f"stale_grad{k}"] = (why, _step(spec, [g + scale * s for g, s in
                                                                  zip(self.grad, spec["stale"])]))
        self.wrong["no_step"] = ("the parameters did not change at all: call optimizer.step() after combining "
                                 "the gradients", _flat(spec["weights"]))


NOT_COMBINED = ("no all-reduce of the gradients ran before the step. Combine every parameter's .grad across "
                "ranks (dist.all_reduce); with DistributedDataParallel, the hooks that do it are skipped by a "
                "forward through ddp_model.module and by a backward inside ddp_model.no_sync().")


def _kind(value):
    """What a value that crossed as itself is, in words ("<Name>" is the probe's word for any other type)."""
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        return f"a {value[1:-1][:60]} object"
    return describe(value)


def _run(sandbox, spec):
    report = sandbox.probe("ddp_run", spec, ranks_timeout())
    return rank_values(report, len(spec["shards"]), "ddp_step"), report


def _check_params(ranks, truth, setting):
    for rank, out in enumerate(ranks):
        params = _flat(out["params"])
        if _close(params, truth.params):
            continue
        msg = (f"{setting}: after ddp_step, rank {rank}'s parameters are not one SGD step on the whole "
               f"global batch (largest difference {float((params - truth.params).abs().max()):.3g}).")
        local = _flat(truth.local_grads[rank])
        grads = out["grads"]
        grads_local = all(g is not None for g in grads) and _along(_flat(grads), local)
        if _along(_flat(truth.spec["weights"]) - params, local):
            if grads_local:
                fail(msg + f" Rank {rank} stepped with the gradient of its own shard only, and its .grad was "
                     "never combined with the other ranks': " + NOT_COMBINED, misconception="no_sync")
            fail(msg + f" Rank {rank} stepped with the gradient of its own shard: the optimizer step ran before "
                 "the gradients were combined across ranks. All-reduce first, then step.",
                 misconception="step_before_allreduce")
        # a cause only where exactly one known mistake gives these parameters (issue 44)
        hits = [key for key, (_, value) in truth.wrong.items() if _close(params, value, rtol=1e-8, atol=1e-10)]
        if hits and len({k.rstrip("12") for k in hits}) == 1:
            key = hits[0]
            if key == "unweighted_mean" and grads_local:
                fail(msg + " The parameters were averaged across ranks after each rank's local step: that "
                     "equals averaging gradients only for plain SGD with equal shards. Combine the gradients "
                     "(weighted by shard size) before the step instead.", misconception="average_params")
            fail(msg + " It looks like " + truth.wrong[key][0] + ".", misconception=key.rstrip("12"))
        fail(msg + " Combine the gradients so that each equals the gradient of the mean loss over all examples "
             "of all ranks, then step once.")


@pytest.mark.rules("same_step")
@pytest.mark.points(2)
def test_two_ranks_equal_shards(sandbox):
    """Two ranks with equal shards end with one full-batch SGD step"""
    spec = _spec(11, [4, 4])
    ranks, _ = _run(sandbox, spec)
    _check_params(ranks, Truth(spec), "2 ranks, shards of 4 and 4 examples")


@pytest.mark.rules("same_step")
@pytest.mark.points(2.5)
def test_three_ranks_unequal_shards(sandbox):
    """Three ranks with unequal shards (5, 2, 1) end with one full-batch SGD step"""
    spec = _spec(12, [5, 2, 1])
    ranks, _ = _run(sandbox, spec)
    _check_params(ranks, Truth(spec), "3 ranks, shards of 5, 2 and 1 examples")


@pytest.mark.rules("global_gradient")
@pytest.mark.points(1.5)
def test_gradients_are_the_global_gradient(sandbox):
    """After the call every rank's .grad is the gradient of the global mean loss"""
    spec = _spec(13, [2, 5, 3])
    ranks, _ = _run(sandbox, spec)
    truth = Truth(spec)
    for rank, out in enumerate(ranks):
        grads = out["grads"]
        check(all(g is not None for g in grads),
              f"After ddp_step, rank {rank} has parameters whose .grad is None: leave the combined gradients "
              "in .grad (do not zero them after the step).", misconception="grad_cleared")
        flat = _flat(grads)
        if _close(flat, _flat(truth.grad)):
            continue
        msg = (f"3 ranks, shards of 2, 5 and 3 examples: after ddp_step, rank {rank}'s .grad is not the gradient "
               "of the mean loss over the global batch.")
        if _along(flat, _flat(truth.local_grads[rank])):
            fail(msg + " It is (a multiple of) the gradient of this rank's own shard: it was never combined with "
                 "the other ranks': " + NOT_COMBINED, misconception="no_sync")
        if _close(flat, _flat(truth.summed)):
            fail(msg + " It is the sum of the ranks' gradients: divide as well.", misconception="sum_not_mean")
        if _close(flat, _flat(truth.mean)):
            fail(msg + " It is the plain average of the ranks' gradients; with unequal shards each rank must "
                 "weigh by its number of examples.", misconception="unweighted_mean")
        fail(msg)


@pytest.mark.rules("returns_global_loss")
@pytest.mark.points(1.5)
def test_returns_the_global_mean_loss(sandbox):
    """Every rank returns the global mean loss as a Python float"""
    spec = _spec(14, [1, 4, 2])
    ranks, _ = _run(sandbox, spec)
    truth = Truth(spec)
    sizes = [len(x) for x, _ in spec["shards"]]
    for rank, out in enumerate(ranks):
        value = out["loss"]
        check(type(value) is float,
              f"Rank {rank} returned {_kind(value)}; return the global mean loss as a Python float "
              "(for example with .item()).", misconception="loss_type")
        if abs(value - truth.loss) <= 1e-10 * abs(truth.loss) + 1e-12:
            continue
        msg = (f"3 ranks, shards of {sizes}: rank {rank} returned {value:.10g}, but the mean loss over the whole "
               f"batch is {truth.loss:.10g}.")
        # a cause only where every rank's value is that mistake's (issue 44): one number proves nothing
        values = [o["loss"] for o in ranks]
        numbers = all(type(v) is float for v in values)
        if numbers and all(abs(v - t) <= 1e-9 * abs(v) + 1e-12 for v, t in zip(values, truth.local_losses)):
            fail(msg + " That is the loss of this rank's own shard: combine the losses across ranks too.",
                 misconception="local_loss")
        unweighted = sum(truth.local_losses) / len(sizes)
        if numbers and all(abs(v - unweighted) <= 1e-9 * abs(v) + 1e-12 for v in values):
            fail(msg + " That is the plain average of the ranks' mean losses; weigh each by its shard size "
                 "(sum of losses over sum of counts).", misconception="unweighted_loss")
        fail(msg)


@pytest.mark.rules("global_gradient")
@pytest.mark.points(1)
def test_stale_gradients_are_discarded(sandbox):
    """Gradients left in .grad before the call do not leak into the step"""
    spec = _spec(15, [3, 3], stale=True)
    ranks, _ = _run(sandbox, spec)
    _check_params(ranks, Truth(spec), "2 ranks whose .grad already held gradients from an earlier step")


@pytest.mark.rules("same_step")
@pytest.mark.points(0.5)
def test_cross_entropy_with_a_single_example_rank(sandbox):
    """Cross-entropy, 3 ranks, one of them with a single example"""
    spec = _spec(16, [3, 1, 4], loss="cross_entropy")
    ranks, _ = _run(sandbox, spec)
    _check_params(ranks, Truth(spec), "cross-entropy on 3 ranks with shards of 3, 1 and 4 examples")


@pytest.mark.rules("group_left_alone")
@pytest.mark.points(0.5)
def test_leaves_the_process_group_to_the_grader(sandbox):
    """ddp_step leaves the process group to the grader"""
    spec = _spec(17, [2, 3])
    spec["group_check"] = check_value = 1000.0 + torch.randint(0, 1000, (1,)).item()  # the judge's value
    _, report = _run(sandbox, spec)
    check(group_left_alive(report, 2, "ddp_step", check_value),
          "After ddp_step returned, the process group was gone: do not call destroy_process_group (or "
          "init_process_group) in your function; the grader creates the group and destroys it.",
          misconception="destroys_group")


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_leaves_the_batch_and_settings_as_found(sandbox):
    """On every rank, ddp_step leaves its shard (x, y) and torch's global settings as found"""
    for seed, sizes, loss in ((71, [3, 2], "mse"), (72, [2, 1, 4], "cross_entropy")):
        spec = _spec(seed, sizes, loss)
        spec["probe"] = settings_probe(f"ddp_step {seed}")
        ranks, _ = _run(sandbox, spec)
        for rank, out in enumerate(ranks):
            check_observed(out["seen"], spec["probe"], may_change=("model", "optimizer"),
                           call=f"ddp_step(rank, world_size, model, batch, optimizer, loss_fn) on rank {rank} of "
                                f"{len(sizes)} ({loss} loss)")
