import torch
import torch.nn.functional as F


# The three broken snippets of the statement, as functions you can run.
def broken_snippet_1(device=None):
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    w = torch.randn(3, requires_grad=True).to(device)
    loss = (w ** 2).sum()
    loss.backward()
    return w.grad  # None on a GPU machine (on CPU, try .to(torch.float64))


def broken_snippet_2():
    w = torch.randn(3, requires_grad=True)
    w2 = w * 2
    loss = (w2 ** 2).sum()
    loss.backward()
    return w2.grad  # None


def broken_snippet_3():
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
    logits = model(x)
    loss = 1 - (logits.argmax(dim=1) == y).float().mean()
    loss.backward()  # RuntimeError


def make_leaf(shape, device="cpu", dtype=torch.float32):
    raise NotImplementedError


def intermediate_grad(w):
    raise NotImplementedError


def diagnose():
    raise NotImplementedError


def training_loss(logits, target):
    raise NotImplementedError
