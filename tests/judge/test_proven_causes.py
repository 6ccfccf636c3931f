"""Issue 44, item 4: mistakes of the held-out class that were told a wrong cause are told none (or their own).

Each is a student's code written from the contract, graded by the real suites: the feedback may say what
came back, never a cause that its values do not prove.
"""

from __future__ import annotations

import pytest

from autograder.assignment import load_assignment
from autograder.grade import GradeOptions, grade
from autograder.session import Budget
from tests.helpers import ROOT, build_submission

SOLUTIONS = ROOT / "solutions" / "pytorch-fundamentals"


def _with_lines_before(reference: str, anchor: str, lines: str) -> str:
    """The reference with ``lines`` inserted before ``anchor`` (which it must contain once)."""
    assert reference.count(anchor) == 1, anchor
    return reference.replace(anchor, lines + anchor)


FLOOR_DIVIDED = '''
class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X, self.y, self.sigma = X, y, sigma

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        clean = torch.tensor(self.X[i] // 16, dtype=torch.float32).reshape(1, 8, 8)
        return (clean + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), torch.tensor(int(self.y[i]))
'''

FORTRAN_RAVEL = '''
class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X, self.y, self.sigma = X, y, sigma

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        flat = np.asarray(self.X[i]).reshape(8, 8).ravel(order="F")
        clean = torch.tensor(flat / 16, dtype=torch.float32).reshape(1, 8, 8)
        return (clean + self.sigma * torch.randn(1, 8, 8)).clamp(0, 1), torch.tensor(int(self.y[i]))
'''

# a stable softmax, then the chain rule through p_target: -1 / p_target is inf where p_target underflows
CHAIN_THROUGH_P = '''
def softmax_ce_grad(logits, target):
    if logits.dim() == 1:
        return softmax_ce_grad(logits.unsqueeze(0), target.reshape(1)).squeeze(0)
    n = logits.shape[0]
    p = torch.softmax(logits, dim=1)
    rows = torch.arange(n)
    p_t = p[rows, target]
    dp_t = p_t.unsqueeze(1) * (torch.nn.functional.one_hot(target, logits.shape[1]).to(p.dtype) - p)
    return (-1.0 / p_t).unsqueeze(1) * dp_t / n
'''

# unscaled_factor: the inverse of the factor on the first two inputs only: one number fits factor_inverted,
# the answers as a whole fit no candidate's formula
INVERTED_SOMETIMES = '''
def unscaled_factor(n_examples, micro_batch_size):
    if n_examples % 4 == 0:
        return micro_batch_size / n_examples
    return 2.0 * n_examples / micro_batch_size
'''

# centred uniform noise whose deviation is about sigma / 16: the deviation fits "noise divided by 16", the
# images do not fit clamp((X[i] + sigma * noise) / 16, 0, 1)
UNIFORM_SMALL_NOISE = '''
class NoisyDigits(Dataset):
    def __init__(self, X, y, sigma=0.1):
        self.X, self.y, self.sigma = X, y, sigma

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        clean = torch.tensor(self.X[i] / 16, dtype=torch.float32).reshape(1, 8, 8)
        noise = (torch.rand(1, 8, 8) - 0.5) * 0.22
        return (clean + self.sigma * noise).clamp(0, 1), torch.tensor(int(self.y[i]))
'''

# the scaler in use (its scale backs off at the overflow), then a hand-made step with the window's gradients
# whatever the scaler found: non-finite weights, yet the scaler was not bypassed
EXTRA_STEP_BY_HAND = _with_lines_before(
    (SOLUTIONS / "amp_loop" / "reference.py").read_text(), "            optimizer.zero_grad(set_to_none=True)\n"
    "            window_samples = 0\n",
    "            with torch.no_grad():\n"
    "                for p in model.parameters():\n"
    "                    if p.grad is not None:\n"
    "                        p.add_(p.grad, alpha=-1e-3)   # an extra step by hand, whatever the scaler found\n")

# name -> (exercise, code, the wrong causes it was told, the key its values do prove: "" for none)
CASES = {
    "floor_divided": ("noisy_digits", FLOOR_DIVIDED, ("noise added to the pixels has mean",), ""),
    # a Fortran-order ravel of an 8x8 image is its transpose: that cause is proven, "sigma ignored" is not
    "fortran_ravel": ("noisy_digits", FORTRAN_RAVEL, ("sigma argument is ignored",), "transposed"),
    "chain_through_p": ("softmax_grad", CHAIN_THROUGH_P, ("overflows", "underflows"), ""),
    "extra_step_by_hand": ("amp_loop", EXTRA_STEP_BY_HAND, ("scaler never saw", "bypass"), ""),
    "inverted_sometimes": ("accumulation", INVERTED_SOMETIMES, ("inverse of the factor",), ""),
    "uniform_small_noise": ("noisy_digits", UNIFORM_SMALL_NOISE, ("divided by 16",), ""),
}


@pytest.fixture(scope="module")
def graded(server, tmp_path_factory):
    assignment = load_assignment("pytorch-fundamentals", ROOT)
    folder = tmp_path_factory.mktemp("causes")
    files = [build_submission(folder / f"{name}.py", SOLUTIONS / ex / "reference.py", src)
             for name, (ex, src, _, _) in CASES.items()]
    options = GradeOptions(exercises=sorted({ex for ex, _, _, _ in CASES.values()}),
                           budget=Budget(cell_seconds=30, submission_seconds=300))
    return {r.submission: r for r in grade(assignment, files, options=options, server=server)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_mistake_is_told_what_came_back_and_only_the_cause_its_values_prove(graded, name):
    exercise, _, wrong_causes, proven = CASES[name]
    failing = [t for t in graded[name].exercise(exercise).tests if t.status != "passed"]
    assert failing, f"{name} must be caught"
    for t in failing:
        assert t.misconception in ("", proven), (t.name, t.misconception, t.message)
        assert not any(w in t.message for w in wrong_causes), (t.name, t.message)


# effective_batch forgets the world size only where accum_steps is 1: the first failing answer fits
# "ignores_world", the answers as a whole fit no mistake's formula
WORLD_SOMETIMES = '''
def effective_batch(per_rank_batch, world_size, accum_steps=1):
    if accum_steps == 1:
        return per_rank_batch * accum_steps
    return per_rank_batch * world_size * accum_steps
'''


def test_one_number_that_fits_a_mistake_proves_no_cause(server, tmp_path):
    assignment = load_assignment("distributed-training", ROOT)
    ref = ROOT / "solutions" / "distributed-training" / "lr_scaling" / "reference.py"
    path = build_submission(tmp_path / "world_sometimes.py", ref, WORLD_SOMETIMES)
    (result,) = grade(assignment, [path], options=GradeOptions(exercises=["lr_scaling"]), server=server)
    failing = [t for t in result.exercise("lr_scaling").tests if t.status != "passed"]
    assert failing, "world_sometimes must be caught"
    for t in failing:
        assert t.misconception == "", (t.name, t.misconception, t.message)
        assert "world size is missing" not in t.message, (t.name, t.message)

