"""Public tests for ddp_step: two ranks with equal shards. The hidden suite
also uses unequal shards, three ranks, stale gradients and cross-entropy."""
import torch
import torch.nn.functional as F

from autograder.judge import rank_values, ranks_timeout


def test_two_equal_shards_match_one_full_batch_step(student, sandbox):
    """ddp_step on 2 equal shards equals one SGD step on the whole batch"""
    x = torch.randn(6, 3, dtype=torch.float64)
    y = torch.randn(6, 1, dtype=torch.float64)
    w, b = torch.randn(1, 3, dtype=torch.float64), torch.randn(1, dtype=torch.float64)
    model = sandbox.ref("torch.nn.Linear")(3, 1).double()
    model.load_state_dict({"weight": w, "bias": b})
    opt = sandbox.ref("torch.optim.SGD")(model.parameters(), lr=0.1)
    mse = sandbox.ref("torch.nn.functional.mse_loss")
    args = [[r, 2, model, (x[3 * r:3 * r + 3], y[3 * r:3 * r + 3]), opt, mse] for r in range(2)]
    report = sandbox.ref("autograder.sandbox.ranks.call_on_ranks")("ddp_step", args, timeout=ranks_timeout())
    ranks = rank_values(report, 2, "ddp_step")

    wj = w.clone().requires_grad_()
    bj = b.clone().requires_grad_()
    loss = F.mse_loss(x @ wj.T + bj, y)
    loss.backward()
    for r, out in enumerate(ranks):
        state = out["args"][2]
        assert torch.allclose(state["weight"], w - 0.1 * wj.grad, rtol=1e-10, atol=1e-12), \
            f"rank {r}: the weight after the step is not one SGD step on the whole batch"
        assert torch.allclose(state["bias"], b - 0.1 * bj.grad, rtol=1e-10, atol=1e-12), \
            f"rank {r}: the bias after the step is not one SGD step on the whole batch"
        assert isinstance(out["value"], float), f"rank {r} returned {type(out['value']).__name__}, not a float"
        assert abs(out["value"] - loss.item()) < 1e-10, f"rank {r} returned {out['value']}, not {loss.item()}"
