"""Public test for rank_zero_checkpoint: save on 2 ranks, then resume. The
hidden suite also checks who writes, when ranks return, and that training
continues exactly."""

from autograder.judge import rank_values, ranks_timeout


def test_resume_returns_the_saved_epoch(student, sandbox):
    """resume returns the epoch save_on_rank_zero saved"""
    model = sandbox.ref("torch.nn.Linear")(3, 2)
    opt = sandbox.ref("torch.optim.SGD")(model.parameters(), lr=0.1, momentum=0.9)
    call = sandbox.ref("autograder.sandbox.ranks.call_on_ranks")
    report = call("save_on_rank_zero", [["public_ckpt.pt", model, opt, 4]] * 2, timeout=ranks_timeout())
    rank_values(report, 2, "save_on_rank_zero")
    report = call("resume", [["public_ckpt.pt", model, opt]] * 2, timeout=ranks_timeout())
    for rank, out in enumerate(rank_values(report, 2, "resume")):
        assert out["value"] == 4, f"rank {rank}: resume returned {out['value']!r}, expected 4"
