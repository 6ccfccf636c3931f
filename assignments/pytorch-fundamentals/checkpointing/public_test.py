"""Public tests for checkpointing. The hidden suite interrupts and resumes
real training runs (dropout, Adam, schedulers) and compares them bit for bit."""
import torch
import torch.nn.functional as F


def test_epoch_loss_single_batch(student, sandbox):
    """epoch_loss on one batch is the loss of that batch, as a float"""
    X = torch.randn(6, 3)
    Y = torch.randint(0, 2, (6,))
    W = torch.randn(2, 3)
    lin = sandbox.ref("torch.nn.Linear")(3, 2, bias=False)
    lin.load_state_dict({"weight": W})
    loader = [(X, Y)]
    value = student.epoch_loss(lin, loader, sandbox.ref("torch.nn.functional.cross_entropy"))
    assert isinstance(value, float), f"epoch_loss should return a Python float, got {type(value).__name__}"
    expected = F.cross_entropy(X @ W.T, Y).item()
    assert abs(value - expected) < 1e-5 * max(1.0, abs(expected)), f"got {value}, expected {expected}"


def test_load_returns_saved_epoch(student, sandbox):
    """load_checkpoint returns the epoch given to save_checkpoint"""
    Linear = sandbox.ref("torch.nn.Linear")
    model = Linear(3, 2)
    opt = sandbox.ref("torch.optim.SGD")(model.parameters(), lr=0.1, momentum=0.9)
    sched = sandbox.ref("torch.optim.lr_scheduler.StepLR")(opt, step_size=1)
    student.save_checkpoint("public_ckpt.pt", model, opt, sched, 7)
    model2 = Linear(3, 2)
    opt2 = sandbox.ref("torch.optim.SGD")(model2.parameters(), lr=0.1, momentum=0.9)
    sched2 = sandbox.ref("torch.optim.lr_scheduler.StepLR")(opt2, step_size=1)
    epoch = student.load_checkpoint("public_ckpt.pt", model2, opt2, sched2)
    assert epoch == 7 and isinstance(epoch, int), f"load_checkpoint returned {epoch!r}, expected 7"
    assert torch.equal(model2.state_dict()["weight"], model.state_dict()["weight"]), \
        "the weights were not restored"
