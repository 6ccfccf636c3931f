"""Public test for global_metrics: two ranks with equal counts. The hidden
suite uses unequal counts, three ranks, padding and an empty rank."""

from autograder.judge import rank_values, ranks_timeout


def test_global_mean_two_equal_ranks(student, sandbox):
    """global_mean on 2 ranks with equal counts"""
    call = sandbox.ref("autograder.sandbox.ranks.call_on_ranks")
    report = call("global_mean", [[6.0, 3], [12.0, 3]], timeout=ranks_timeout())
    for rank, out in enumerate(rank_values(report, 2, "global_mean")):
        assert out["value"] == 3.0, f"rank {rank} returned {out['value']!r}; (6 + 12) / (3 + 3) = 3.0"
