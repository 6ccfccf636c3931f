"""Hidden suite for global_metrics (contract: distributed-training, section 3).

The probe calls the student's function on every rank of a real gloo group;
the expected global values (and those of the known mistakes: the mean of the
ranks' means, dividing by the world size, counting padding, float32 sums) are
computed here from the inputs the judge chose.
"""
import math

import pytest
import torch

from autograder.judge import check, fail, rank_values, ranks_timeout
from autograder.judge.conventions import check_observed, settings_probe


def _judged(v):
    """What the judge makes of a rank's value, which crossed as itself: its type, and its number (or None)."""
    if type(v) is float:
        return {"type": "float", "value": v}
    if type(v) is int:
        return {"type": "int", "value": float(v)}
    if type(v) is torch.Tensor:
        one = v.numel() == 1 and (v.is_floating_point() or not v.is_complex())
        return {"type": "Tensor", "value": float(v.detach().double().reshape(-1)[0]) if one else None}
    if isinstance(v, str) and v.startswith("<"):  # what the probe made of another type: never a plain number
        return {"type": f"{v.strip('<>')[:60]} object (not a plain Python number)", "value": None}
    return {"type": type(v).__name__, "value": None}


def _values(sandbox, probe, label, world_size, *args):
    report = sandbox.probe(probe, *args, ranks_timeout())
    return [_judged(v) for v in rank_values(report, world_size, label)]


def _near(a, b, rtol=1e-12):
    return a is not None and b is not None and math.isfinite(a) and abs(a - b) <= rtol * max(abs(b), 1e-300)


def _judge_ranks(outs, expected, wrong, setting, label):
    for rank, out in enumerate(outs):
        check(out["value"] is not None, f"{setting}: rank {rank}'s {label} returned a {out['type']}; return a "
              "Python float.", misconception="types")
    values = [out["value"] for out in outs]
    if all(_near(v, expected) for v in values):
        return
    bad = next(r for r, v in enumerate(values) if not _near(v, expected))
    msg = f"{setting}: rank {bad} returned {values[bad]!r}, but the global value is {expected!r}."
    if _near(values[0], expected, 1e-9) and bad != 0:
        fail(msg + " Rank 0 has the right value and the other ranks do not: dist.reduce only delivers the result "
             "to the destination rank; use all_reduce so that every rank gets it.",
             misconception="reduce_not_allreduce")
    # a known mistake is named only when it gives these values on every rank and no other mistake does
    hits = [key for key, (_, value) in wrong.items() if _matches(values, value)]
    if len(hits) == 1:
        fail(msg + " It looks like " + wrong[hits[0]][0] + ".", misconception=hits[0])
    fail(msg)


def _matches(values, candidate):
    """Whether every rank's value is what the mistake gives on that rank (a callable: per rank).

    NaN matches NaN only beside a finite match: NaN on every rank fits every mistake that gives NaN and
    proves none of them (issue 44)."""
    wants = [candidate(rank) if callable(candidate) else candidate for rank in range(len(values))]
    if all(isinstance(c, float) and math.isnan(c) for c in wants):
        return False
    for rank, v in enumerate(values):
        c = candidate(rank) if callable(candidate) else candidate
        if v is None or not (_near(v, c, 1e-9) or (math.isnan(v) and math.isnan(c))):
            return False
    return True


@pytest.mark.rules("global_mean")
@pytest.mark.points(2.5)
def test_global_mean_with_unequal_counts(sandbox):
    """global_mean over 3 ranks holding 5, 1 and 50 examples"""
    nums, dens = [10.0, 3.0, 100.5], [5, 1, 50]
    outs = _values(sandbox, "mean_run", "global_mean", 3, nums, dens)
    expected = sum(nums) / sum(dens)
    wrong = {
        "mean_of_means": ("the ranks' own means were averaged; weigh them by their counts: reduce the numerators "
                          "and the denominators, then divide", sum(n / d for n, d in zip(nums, dens)) / 3),
        "divide_by_world": ("the numerators were summed and divided by the number of ranks instead of by the "
                            "total count", sum(nums) / 3),
        "no_reduce": ("each rank returned its own mean: nothing was combined across ranks",
                      lambda r: nums[r] / dens[r]),
    }
    _judge_ranks(outs, expected, wrong, "Numerators 10.0, 3.0, 100.5 over counts 5, 1, 50", "global_mean")


@pytest.mark.rules("global_mean")
@pytest.mark.points(1)
def test_global_mean_keeps_float64_precision(sandbox):
    """global_mean keeps float64 precision on large sums"""
    nums, dens = [1_000_000_000.125, 2_000_000_000.375], [3, 5]
    outs = _values(sandbox, "mean_run", "global_mean", 2, nums, dens)
    expected = sum(nums) / sum(dens)
    f32 = float(torch.tensor(nums, dtype=torch.float32).sum() / torch.tensor(dens, dtype=torch.float32).sum())
    wrong = {"float32": ("the sums were reduced in float32 (torch.tensor of Python floats is float32 by default), "
                         "which keeps only about 7 significant digits: use dtype=torch.float64", f32)}
    _judge_ranks(outs, expected, wrong, "Sums of about 1e9 and 2e9", "global_mean")


@pytest.mark.rules("global_mean")
@pytest.mark.points(1)
def test_global_mean_returns_a_float_on_every_rank(sandbox):
    """global_mean returns a Python float, the same on every rank"""
    nums, dens = [1.5, 2.5, 5.0], [2, 2, 2]
    outs = _values(sandbox, "mean_run", "global_mean", 3, nums, dens)
    for rank, out in enumerate(outs):
        check(out["type"] == "float", f"Rank {rank} returned a {out['type']}; return a Python float "
              "(.item() turns a one-element tensor into one).", misconception="types")
    _judge_ranks(outs, 9.0 / 6, {}, "Numerators 1.5, 2.5, 5.0 over counts 2, 2, 2", "global_mean")


def _accuracy_shards(seed, sizes, valid_counts, classes=4):
    g = torch.Generator().manual_seed(seed)
    shards = []
    for m, k in zip(sizes, valid_counts):
        logits = torch.randn(m, classes, generator=g)
        target = torch.randint(0, classes, (m,), generator=g)
        # padding positions (the last ones) are predicted correctly, so counting them shows
        pad = torch.arange(m) >= k
        target[pad] = logits[pad].argmax(dim=1)
        shards.append((logits, target, ~pad))
    return shards


def _accuracy_truth(shards):
    correct = [int(((lg.argmax(1) == t) & v).sum()) for lg, t, v in shards]
    valid = [int(v.sum()) for _, _, v in shards]
    all_correct = [int((lg.argmax(1) == t).sum()) for lg, t, _ in shards]
    sizes = [len(t) for _, t, _ in shards]
    expected = sum(correct) / sum(valid)
    means = [c / v if v else float("nan") for c, v in zip(correct, valid)]
    wrong = {
        "no_reduce": ("each rank returned its own accuracy: nothing was combined across ranks",
                      lambda r: means[r]),
        "counts_padding": ("the padding duplicates were counted: only positions where `valid` is True count, "
                           "in the numerator and in the denominator", sum(all_correct) / sum(sizes)),
        "padding_in_denominator": ("the padding duplicates were left in the denominator: divide by the number "
                                   "of valid examples", sum(correct) / sum(sizes)),
        "mean_of_means": ("the ranks' own accuracies were averaged; ranks hold different numbers of valid "
                          "examples, so sum the correct counts and the valid counts instead",
                          sum(means) / len(means)),
    }
    return expected, wrong


@pytest.mark.rules("global_accuracy")
@pytest.mark.points(3)
def test_global_accuracy_ignores_padding(sandbox):
    """global_accuracy over 3 ranks, padding duplicates excluded"""
    shards = _accuracy_shards(33, [6, 6, 6], [6, 5, 2])  # a seed where the known mistakes all differ
    outs = _values(sandbox, "accuracy_run", "global_accuracy", 3, shards)
    for rank, out in enumerate(outs):  # -> float is a Python float (contract's clarifications)
        check(out["type"] == "float", f"Rank {rank}'s global_accuracy returned a {out['type']}; return a Python "
              "float (.item() turns a one-element tensor into one).", misconception="types")
    expected, wrong = _accuracy_truth(shards)
    _judge_ranks(outs, expected, wrong, "3 ranks with 6, 5 and 2 valid examples out of 6", "global_accuracy")


@pytest.mark.rules("global_accuracy")
@pytest.mark.points(2)
@pytest.mark.timeout(8)
def test_global_accuracy_with_an_empty_rank(sandbox):
    """global_accuracy when one rank holds no valid example"""
    shards = _accuracy_shards(32, [2, 1, 1], [2, 1, 0])
    outs = _values(sandbox, "accuracy_run", "global_accuracy", 3, shards)
    expected, wrong = _accuracy_truth(shards)
    wrong["mean_of_means"] = ("the ranks' own accuracies were averaged, and a rank with no valid example has "
                              "none (0 / 0): sum the correct and valid counts across ranks, then divide once",
                              float("nan"))
    _judge_ranks(outs, expected, wrong, "3 examples on 3 ranks (rank 2 holds only a padding duplicate)",
                 "global_accuracy")


@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
def test_leave_inputs_and_settings_as_found(sandbox):
    """On every rank, global_accuracy leaves its tensors and both functions leave torch's settings as found"""
    shards = _accuracy_shards(61, [4, 3, 2], [3, 3, 0])
    for name, per_rank in (("global_accuracy", [list(s) for s in shards]),
                           ("global_mean", [[1.5, 2], [2.5, 3], [0.0, 1]])):
        probe = settings_probe(name)
        report = sandbox.probe("observed_run", name, per_rank, probe, ranks_timeout())
        for rank, out in enumerate(rank_values(report, len(per_rank), name)):
            args = ["logits", "target", "valid"] if name == "global_accuracy" else ["numerator", "denominator"]
            check_observed(out["seen"], probe, args=per_rank[rank], kwargs={}, names=args,
                           call=f"{name}({', '.join(args)}) on rank {rank} of 3")
            for label, before, after in zip(args, per_rank[rank], out["args"]):
                if isinstance(before, torch.Tensor):
                    check(isinstance(after, torch.Tensor) and torch.equal(after, before),
                          f"After {name}(...) on rank {rank}, its input `{label}` had changed: the contract's "
                          "conventions say a function never modifies its inputs in place.")
