"""Public test for global_metrics: two ranks with equal counts. The hidden
suite uses unequal counts, three ranks, padding and an empty rank."""

from autograder.judge import rank_values, ranks_timeout


def test_global_mean_two_equal_ranks(student, sandbox):
    """global_mean on 2 ranks with equal counts"""
    call = sandbox.ref("autograder.sandbox.ranks.call_on_ranks")
    report = call("global_mean", [[6.0, 3], [12.0, 3]], timeout=ranks_timeout())
    for rank, out in enumerate(rank_values(report, 2, "global_mean")):
        assert out["value"] == 3.0, f"rank {rank} returned {out['value']!r}; (6 + 12) / (3 + 3) = 3.0"


def test_global_accuracy_two_ranks(student, sandbox):
    """global_accuracy on 2 ranks, every example valid"""
    import torch

    call = sandbox.ref("autograder.sandbox.ranks.call_on_ranks")
    args = [[torch.tensor([[2.0, 0.0], [0.0, 1.0]]), torch.tensor([0, 0]), torch.tensor([True, True])],
            [torch.tensor([[0.0, 3.0]]), torch.tensor([1]), torch.tensor([True])]]
    report = call("global_accuracy", args, timeout=ranks_timeout())
    for rank, out in enumerate(rank_values(report, 2, "global_accuracy")):
        assert isinstance(out["value"], float) and abs(out["value"] - 2 / 3) < 1e-9, (
            f"rank {rank} returned {out['value']!r}; 2 of the 3 examples of both ranks are right: 2/3")
