"""Hidden suite for amp_loop (contract section 8).

The student's train_epoch runs in the sandbox (probes.run_train_epoch) on a
model, loader, optimizer, scheduler and GradScaler built from the plain specs
below; the expected outcome comes from the trusted loop `_reference_epoch` in
this file, run in the judge on the same inputs under the same autocast (CPU:
bfloat16 with an enabled CPU GradScaler; CUDA: float16, when both the sandbox
and the judge see a GPU).

Autocast makes values inexact (bfloat16 keeps 8 significant bits), and correct
loops legitimately differ in where they divide (loss or gradients, before or
after unscaling), so parameters are compared through the relative L1 distance
between the student's and the reference's *updates* (final - initial), with a
tolerance well above that noise and well below the effect of every known
mistake (all of which change the updates by a large factor).

Sandbox-measured facts (everything else is decided in the judge): the hooks
in probes.py record, for each backward call, whether `.grad` was None before
the gradient was accumulated and whether autocast was enabled, and, for each
forward call, whether autocast was enabled with which dtype. Student code can
rewrite those hooks, so the two tests that read them are advice (`in_process`,
0 points: issue 43); their point went to the generated setups, checked on values.
"""
import pytest
import torch
import torch.nn as nn
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from torch.utils.data import DataLoader, Subset, TensorDataset

from autograder.judge import check, describe, fail
from autograder.judge.conventions import check_observed, settings_probe

GENERATED = settings(derandomize=True, max_examples=5, deadline=None, database=None,
                     phases=[Phase.explicit, Phase.generate], print_blob=False)

UPDATE_TOL = 0.03      # relative L1 distance between update vectors
INIT_SCALE = 1024.0


# ---------------------------------------------------------------- builders
# (the same as in probes.py: the judge rebuilds the very same objects)

def _build_model(sizes, weights, batchnorm=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            if batchnorm:
                layers.append(nn.BatchNorm1d(sizes[i + 1]))
            layers.append(nn.ReLU())
    model = nn.Sequential(*layers)
    with torch.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(w)
    return model


def _build_optimizer(model, spec):
    if spec["kind"] == "sgd":
        return torch.optim.SGD(model.parameters(), lr=spec["lr"],
                               momentum=spec.get("momentum", 0.0))
    return torch.optim.AdamW(model.parameters(), lr=spec["lr"],
                             weight_decay=spec["weight_decay"])


def _build_loader(spec):
    data = TensorDataset(spec["X"], spec["Y"])
    kind = spec.get("loader", "plain")
    if kind == "subset":
        data = Subset(data, spec["indices"])
    return DataLoader(data, batch_size=spec["batch_size"], shuffle=False,
                      sampler=spec["indices"] if kind == "sampler" else None,
                      drop_last=bool(spec.get("drop_last", False)))


def _build_scheduler(optimizer, spec):
    if spec["kind"] == "step":
        return torch.optim.lr_scheduler.StepLR(optimizer, step_size=spec["step_size"],
                                               gamma=spec["gamma"])
    alpha = spec["alpha"]
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0 / (1.0 + alpha * e))


def _make_spec(sandbox, *, seed, n, batch_size, accum_steps, optimizer, scheduler,
               max_grad_norm, sizes=(6, 16, 4), inf_at=None, hard_last=False, loader="plain",
               drop_last=False, growth_interval=2000, batchnorm=False):
    """``loader``: "plain" (every sample once, in order), "subset" (a Subset of the data), "sampler" (a
    sampler visiting some samples in another order); ``drop_last`` drops a short final batch. The contract
    allows any loader: a loop must count the samples it sees, never len(loader.dataset). ``growth_interval``:
    the GradScaler's (2000, torch's default, never grows the scale in an epoch this short; 1 grows it after
    every step that was not skipped)."""
    g = torch.Generator().manual_seed(seed)
    weights = []
    for d_in, d_out in zip(sizes[:-1], sizes[1:]):
        bound = d_in ** -0.5
        weights.append((torch.rand(d_out, d_in, generator=g) * 2 - 1) * bound)
        weights.append((torch.rand(d_out, generator=g) * 2 - 1) * bound)
        if batchnorm and d_out != sizes[-1]:  # BatchNorm1d's weight and bias
            weights.append(0.5 + torch.rand(d_out, generator=g))
            weights.append((torch.rand(d_out, generator=g) * 2 - 1) * 0.5)
    X = torch.randn(n, sizes[0], generator=g)
    Y = torch.randint(0, sizes[-1], (n,), generator=g)
    if hard_last:
        # make the last sample a confidently wrong one (large loss), so that a
        # short final batch weighs visibly differently per sample and per batch
        X[-1] *= 6.0
        with torch.no_grad():
            logits = _build_model(sizes, weights)(X[-1:])
        Y[-1] = int(logits.argmin())
    device = "cuda" if (sandbox.probe("cuda_available") and torch.cuda.is_available()) else "cpu"
    return {"sizes": list(sizes), "weights": weights, "X": X, "Y": Y,
            "batch_size": batch_size, "accum_steps": accum_steps,
            "optimizer": optimizer, "scheduler": scheduler,
            "max_grad_norm": max_grad_norm, "init_scale": INIT_SCALE,
            "inf_at": inf_at, "device": device, "loader": loader, "drop_last": drop_last,
            "growth_interval": growth_interval, "probe": settings_probe(f"train_epoch {seed}"),
            "batchnorm": batchnorm,
            "indices": torch.randperm(n, generator=g)[: max(1, (3 * n) // 4)].tolist()}


# ---------------------------------------------------------------- reference

def _reference_epoch(spec, *, divide="window", clip_first=False, final_window=True,
                     skip_aware=True, use_scaler=True, sched_per_batch=False, zero_each_batch=False,
                     clip="norm"):
    """The trusted loop (the defaults); the keyword switches reproduce known
    mistakes, used only to name a misconception in the feedback."""
    device = torch.device(spec["device"])
    amp_dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
    model = _build_model(spec["sizes"], spec["weights"], spec.get("batchnorm", False)).to(device)
    params = list(model.parameters())
    loader = _build_loader(spec)
    optimizer = _build_optimizer(model, spec["optimizer"])
    scheduler = _build_scheduler(optimizer, spec["scheduler"])
    scaler = torch.amp.GradScaler(device.type, init_scale=spec["init_scale"],
                                  growth_interval=spec.get("growth_interval", 2000))
    calls = [0]

    def tensor_hook(grad):
        i = calls[0]
        calls[0] += 1
        if spec["inf_at"] is not None and i == spec["inf_at"]:
            return torch.full_like(grad, float("inf"))
        return grad

    params[0].register_hook(tensor_hook)
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    accum = spec["accum_steps"]
    n_batches = len(loader)
    batch_sums, batch_sizes = [], []
    window = 0
    for i, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        if zero_each_batch:
            optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=amp_dtype):
            loss = loss_fn(model(x), y)
        backprop = loss / len(y) if divide == "batch" else loss
        (scaler.scale(backprop) if use_scaler else backprop).backward()
        if sched_per_batch:
            scheduler.step()
        batch_sums.append(loss.item())
        batch_sizes.append(len(y))
        window += len(y)
        if (i + 1) % accum == 0 or (final_window and i + 1 == n_batches):
            if use_scaler and not clip_first:
                scaler.unscale_(optimizer)
            for p in params:
                p.grad.div_({"window": window, "accum": accum, "batch": 1}[divide])
            if clip == "norm":
                torch.nn.utils.clip_grad_norm_(params, _max_norm(spec))
            else:
                torch.nn.utils.clip_grad_value_(params, _max_norm(spec))
            before = scaler.get_scale()
            if use_scaler:
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            if (scaler.get_scale() >= before or not skip_aware) and not sched_per_batch:
                scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            window = 0
    return {"params": [p.detach().cpu() for p in params],
            "lr": optimizer.param_groups[0]["lr"], "last_epoch": scheduler.last_epoch,
            "scale": scaler.get_scale(), "batch_sums": batch_sums, "batch_sizes": batch_sizes}


def _max_norm(spec):
    """The clipping threshold of a run; None means the call left max_grad_norm at the contract's default."""
    return 1.0 if spec["max_grad_norm"] is None else spec["max_grad_norm"]


def _update_distance(params, other, init):
    du = torch.cat([(p.double() - w.double()).flatten() for p, w in zip(params, init)])
    dr = torch.cat([(p.double() - w.double()).flatten() for p, w in zip(other, init)])
    return float((du - dr).abs().sum() / dr.abs().sum().clamp_min(1e-30))


def _run(sandbox, spec):
    out = sandbox.probe("run_train_epoch", spec)
    return out


# Known mistakes, each reproduced by a switch of the trusted loop. A diagnosis is given only when the
# student's updates match exactly one of them (on some setups two mistakes give the same updates).
VARIANTS = {
    "divide_by_accum": ({"divide": "accum"},
                        "They match a loop that divides each window's summed loss by accum_steps: with "
                        "reduction='sum' the loss of a window is a sum over all its samples, so it must be divided "
                        "by the number of samples in the window."),
    "divide_by_batch_size": ({"divide": "batch"},
                             "They match a loop that divides each batch's loss by its own batch size: the window's "
                             "gradient is then a sum of batch means, not the mean over the window's samples."),
    "no_final_window": ({"final_window": False},
                        "They match a loop that never steps on the short final window (the last batches when "
                        "len(loader) is not a multiple of accum_steps): those gradients must be used too."),
    "clip_before_unscale": ({"clip_first": True},
                            "They match clipping the gradients while they are still multiplied by the loss scale: "
                            "call scaler.unscale_(optimizer) before clip_grad_norm_, otherwise the threshold is "
                            "compared with scaled gradients."),
    "clip_by_value": ({"clip": "value"},
                      "They match clipping each gradient entry (clip_grad_value_) instead of the total norm of all "
                      "gradients (clip_grad_norm_)."),
    "scheduler_per_batch": ({"sched_per_batch": True},
                            "They match a loop that steps the scheduler after every batch: step it once per "
                            "optimizer step."),
    "zero_inside_window": ({"zero_each_batch": True},
                           "They match a loop that zeroes the gradients before every batch, so only the last batch "
                           "of each window counts: zero them only after each optimizer step."),
}


def _check_params(got, spec, ref, setting, hint):
    params = got["params"]
    check(all(bool(torch.isfinite(p).all()) for p in params),
          f"After one epoch ({setting}) your model's parameters contain inf or nan.")
    dist = _update_distance(params, ref["params"], spec["weights"])
    if dist <= UPDATE_TOL:
        return
    msg = (f"After one epoch ({setting}) the parameter updates your train_epoch made "
           f"differ from the expected ones by {dist:.0%} (relative L1 distance of the "
           f"updates; up to {UPDATE_TOL:.0%} is allowed for mixed-precision rounding).")
    fits = []
    for key, (kwargs, diagnosis) in VARIANTS.items():
        wrong = _reference_epoch(spec, **kwargs)
        if _update_distance(wrong["params"], ref["params"], spec["weights"]) <= UPDATE_TOL:
            continue  # this setup cannot tell that mistake from the right loop
        if _update_distance(params, wrong["params"], spec["weights"]) <= UPDATE_TOL:
            fits.append((key, diagnosis))
    if len(fits) == 1:
        fail(msg + " " + fits[0][1], misconception=fits[0][0])
    fail(msg + " " + hint)


# ---------------------------------------------------------------- tests

@pytest.mark.rules("accumulation_windows")
@pytest.mark.points(1.5)
@pytest.mark.timeout(60)
def test_accumulation_windows(sandbox):
    """Gradients accumulated over windows and divided by the window's sample count"""
    spec = _make_spec(sandbox, seed=101, n=18, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.5},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.7},
                      max_grad_norm=1e4)
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    setting = ("18 samples in batches of 4, accum_steps=2, plain SGD, a clipping "
               "threshold too large to bind")
    _check_params(got, spec, ref, setting,
                  "Each optimizer step should use the summed loss of its window divided by the "
                  "number of samples in that window, and the last, shorter window also gets a step.")
    check(got["last_epoch"] == ref["last_epoch"],
          f"With 5 batches and accum_steps=2 the epoch has {ref['last_epoch']} optimizer "
          f"steps (the last window is short), but your scheduler stepped "
          f"{got['last_epoch']} times. Step the scheduler once per optimizer step, "
          f"not once per batch, and do not forget the final short window.")


@pytest.mark.rules("clip_after_unscale")
@pytest.mark.points(1.5)
@pytest.mark.timeout(60)
def test_clipping_after_unscale(sandbox):
    """Clipping applies to the unscaled gradients"""
    spec = _make_spec(sandbox, seed=202, n=20, batch_size=4, accum_steps=3,
                      optimizer={"kind": "sgd", "lr": 0.2, "momentum": 0.9},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=0.05)
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    _check_params(got, spec, ref, "SGD with momentum, max_grad_norm=0.05 so that clipping binds",
                  "This test checks the clipping: each step clips the unscaled gradients (after "
                  "scaler.unscale_) to a total norm of max_grad_norm, then scaler.step updates.")


@pytest.mark.rules("scheduler_after_step")
@pytest.mark.points(2)
@pytest.mark.timeout(60)
def test_overflow_skips_step_and_scheduler(sandbox):
    """An overflowing window skips the optimizer step and the scheduler step"""
    spec = _make_spec(sandbox, seed=303, n=24, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.3},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.5},
                      max_grad_norm=1e4, inf_at=2)
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    setting = "3 windows of 2 batches; the first batch of the second window has an inf gradient"
    # non-finite weights are a fact; "the scaler was bypassed" is a cause only when the scaler never saw the
    # overflow either (its scale is still the initial one, where a scaler in use backs off once): issue 44
    finite = all(bool(torch.isfinite(p).all()) for p in got["params"])
    check(finite or got["scale"] != INIT_SCALE or ref["scale"] == INIT_SCALE,
          f"After an epoch ({setting}) your weights contain inf/nan and the GradScaler's scale is still "
          f"{INIT_SCALE:g}: the update computed from the infinite gradient was applied, and the scaler never saw "
          f"it. Backpropagate scaler.scale(loss) and update with scaler.step(optimizer) + scaler.update(), which "
          f"skip a step whose gradients are not finite.", misconception="ignores_scaler")
    check(finite, f"After an epoch ({setting}) your weights contain inf/nan (the GradScaler's scale is "
                  f"{got['scale']:g}); the window with the inf gradient must leave the weights untouched.")
    check(got["scale"] == ref["scale"],
          f"After an epoch with one overflowing window the GradScaler's scale is "
          f"{got['scale']:g} (it started at {INIT_SCALE:g}); it should have been backed "
          f"off once. Call scaler.update() after every scaler.step(optimizer).")
    always = _reference_epoch(spec, skip_aware=False)
    # one matching count is a hint; the cause needs the weights of that loop too (issue 44)
    if (got["last_epoch"] == always["last_epoch"] != ref["last_epoch"]
            and _update_distance(got["params"], always["params"], spec["weights"]) <= UPDATE_TOL):
        fail(f"In an epoch of 3 windows where the scaler skipped one optimizer step because of an inf gradient, "
             f"your scheduler stepped {got['last_epoch']} times, once per window: it must step only when the "
             f"optimizer step really happened (compare scaler.get_scale() before and after scaler.update(), for "
             f"example).", misconception="scheduler_steps_on_skip")
    check(got["last_epoch"] == ref["last_epoch"],
          f"In an epoch of 3 windows where the scaler skipped one optimizer step "
          f"because of an inf gradient, your scheduler stepped {got['last_epoch']} "
          f"time(s). The scheduler must step only when the optimizer step really "
          f"happened (compare scaler.get_scale() before and after scaler.update(), "
          f"for example).")
    check(abs(got["lr"] - ref["lr"]) <= 1e-12 * abs(ref["lr"]),
          f"The learning rate at the end of the epoch is {got['lr']:g}, which does not "
          f"follow the StepLR schedule for the optimizer steps that really happened.")
    _check_params(got, spec, ref, setting,
                  "The skipped window must leave the weights untouched and its gradients must "
                  "not leak into the next window.")
    # the same freedom the other way: a scale that grows within the epoch (growth_interval=1) and backs off
    spec = _make_spec(sandbox, seed=305, n=28, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.3},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.5},
                      max_grad_norm=1e4, inf_at=4, growth_interval=1)
    got, ref = _run(sandbox, spec), _reference_epoch(spec)
    setting = ("4 windows of 2 batches with a GradScaler(growth_interval=1), whose scale grows after every step; "
               "the first batch of the third window has an inf gradient")
    check(got["last_epoch"] == ref["last_epoch"],
          f"In an epoch of {setting}, {ref['last_epoch']} optimizer steps really happened, but your scheduler "
          f"stepped {got['last_epoch']} time(s). A scale that grew after a step is a step that happened; only a "
          f"scale that shrank marks a skipped one.")
    check(abs(got["lr"] - ref["lr"]) <= 1e-12 * abs(ref["lr"]),
          f"In an epoch of {setting}, the final learning rate is {got['lr']:g}, not {ref['lr']:g}.")
    _check_params(got, spec, ref, setting, "Only the overflowing window's step may be skipped.")


@pytest.mark.rules("zero_grad_to_none")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(60)
def test_grads_set_to_none(sandbox):
    """Gradients are released (set to None) between windows, kept within a window"""
    spec = _make_spec(sandbox, seed=404, n=20, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.1},
                      scheduler={"kind": "step", "step_size": 2, "gamma": 0.5},
                      max_grad_norm=1.0)
    got = _run(sandbox, spec)
    seen = got["log"]["grad_none_before"]
    n_batches, accum = 5, 2
    check(len(seen) == n_batches,
          f"Expected one backward pass per batch ({n_batches} batches), but the "
          f"first layer's weight received {len(seen)} gradient(s).")
    for i, was_none in enumerate(seen):
        starts_window = i % accum == 0
        if starts_window and not was_none:
            fail(f"When batch {i} (the first of a new window) was backpropagated, the "
                 f"weights' .grad still held a tensor. Zero the gradients with "
                 f"optimizer.zero_grad(set_to_none=True) so they are released (None), "
                 f"not filled with zeros.", misconception="zero_grad_not_none")
        if not starts_window and was_none:
            fail(f"When batch {i} (in the middle of a window of {accum} batches) was "
                 f"backpropagated, .grad was None: the gradients were reset inside the "
                 f"window, so accumulation is lost. Zero only after each optimizer step.",
                 misconception="zero_inside_window")


@pytest.mark.rules("loss_and_autocast")
@pytest.mark.points(1)
@pytest.mark.timeout(60)
def test_returned_mean_loss_per_sample(sandbox):
    """Returns the mean loss per sample, as a Python float"""
    spec = _make_spec(sandbox, seed=505, n=17, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.1},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=1.0, hard_last=True)
    got = _run(sandbox, spec)
    check(type(got["result"]) is float,
          f"train_epoch returned {describe(got['result'])}, expected a Python float "
          f"(for example total.item() / n, or float(...)).", misconception="not_python_float")
    ref = _reference_epoch(spec)
    sums, sizes = ref["batch_sums"], ref["batch_sizes"]
    expected = sum(sums) / sum(sizes)
    value = got["result"]
    if not abs(value - expected) <= 1e-2 * abs(expected):  # a NaN is never close
        _judge_mean_loss(value, _full_pass_mistakes(sums, sizes), (
           f"train_epoch returned {value:.5g}; that is not the mean loss per sample "
           f"over the epoch (17 samples in batches of 4, the last batch holds a single "
           f"sample with a large loss)."))
    _check_subset_drop_last(sandbox)


def _full_pass_mistakes(sums, sizes):
    return {
        "mean_of_batch_means": ("It looks like the mean of the per-batch mean losses, which weighs the "
                                "one-sample final batch like a full batch; divide the summed loss by the "
                                "number of samples instead.", sum(s / n for s, n in zip(sums, sizes)) / len(sums)),
        "divide_by_batches": ("It looks like the summed loss divided by the number of batches, not by "
                              "the number of samples.", sum(sums) / len(sums)),
        "loss_not_divided": ("It looks like the summed loss of the whole epoch, not divided by the number "
                             "of samples.", sum(sums)),
        "last_batch_only": ("It looks like the loss of the last batch only.", sums[-1] / sizes[-1]),
    }


def _check_subset_drop_last(sandbox):
    # a loader that does not visit every sample once: a Subset of 14 of the 17 samples, the short last batch
    # dropped (12 samples seen); len(loader.dataset) is then not the number of samples the epoch saw
    spec = _make_spec(sandbox, seed=515, n=17, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.1},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=1.0, loader="subset", drop_last=True)
    spec["indices"] = spec["indices"] + [i for i in range(17) if i not in spec["indices"]][:14 - len(spec["indices"])]
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    sums, sizes = ref["batch_sums"], ref["batch_sizes"]
    expected = sum(sums) / sum(sizes)
    value = got["result"]
    if type(value) is float and abs(value - expected) <= 1e-2 * abs(expected):
        return
    msg = (f"With a loader over a Subset of 14 samples in batches of 4 and drop_last=True (12 samples seen), "
           f"train_epoch returned {describe(value)}; the mean loss per sample over the epoch is {expected:.5g}.")
    wrong = {
        "divides_by_dataset_len": ("It looks like the summed loss divided by len(loader.dataset) (14): a "
                                   "loader need not visit every sample of its dataset (drop_last, a sampler), "
                                   "so count the samples of the batches the loop actually saw.",
                                   sum(sums) / 14),
        "mean_of_batch_means": ("It looks like the mean of the per-batch mean losses; divide the summed loss by "
                                "the number of samples instead.", sum(s / n for s, n in zip(sums, sizes)) / len(sums)),
        "divide_by_batches": ("It looks like the summed loss divided by the number of batches, not by "
                              "the number of samples.", sum(sums) / len(sums)),
        "loss_not_divided": ("It looks like the summed loss of the whole epoch, not divided by the number "
                             "of samples.", sum(sums)),
    }
    _judge_mean_loss(value, wrong, msg)


def _judge_mean_loss(value, wrong, msg):
    """Name a known mistake only when exactly one gives ``value`` (else say what was expected, no cause)."""
    fits = [(key, why) for key, (why, v) in wrong.items()
            if isinstance(value, float) and abs(value - v) <= 1e-2 * abs(v)]
    if len(fits) == 1:
        fail(msg + " " + fits[0][1], misconception=fits[0][0])
    fail(msg + " Accumulate each batch's summed loss (as a float) and divide by the "
               "number of samples seen.")


@pytest.mark.rules("accumulation_windows", "scheduler_after_step")
@pytest.mark.points(1)
@pytest.mark.timeout(60)
def test_adamw_lambda_schedule(sandbox):
    """AdamW with a LambdaLR schedule and three-batch windows"""
    spec = _make_spec(sandbox, seed=606, n=30, batch_size=4, accum_steps=3,
                      optimizer={"kind": "adamw", "lr": 0.01, "weight_decay": 0.05},
                      scheduler={"kind": "lambda", "alpha": 0.5},
                      max_grad_norm=1.0)
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    check(got["last_epoch"] == ref["last_epoch"],
          f"30 samples in batches of 4 with accum_steps=3 make {ref['last_epoch']} "
          f"windows (the last one short), hence {ref['last_epoch']} optimizer and "
          f"scheduler steps, but your scheduler stepped {got['last_epoch']} times.")
    check(abs(got["lr"] - ref["lr"]) <= 1e-12 * abs(ref["lr"]),
          f"The learning rate after the epoch is {got['lr']:g}, which does not follow "
          f"the LambdaLR schedule for the number of optimizer steps taken.")
    _check_params(got, spec, ref, "AdamW, 30 samples in batches of 4, accum_steps=3",
                  "Check the order: scale + backward per batch; then per window unscale_, divide "
       "by the window's samples, clip, scaler.step, scaler.update, scheduler, zero_grad.")


@pytest.mark.rules("loss_and_autocast")
@pytest.mark.points(0)
@pytest.mark.in_process
@pytest.mark.timeout(60)
def test_autocast_forward_only(sandbox):
    """Autocast wraps the forward pass, not the backward pass"""
    spec = _make_spec(sandbox, seed=707, n=12, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.1},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=1.0)
    got = _run(sandbox, spec)
    expected_dtype = "torch.float16" if spec["device"] == "cuda" else "torch.bfloat16"
    fwd = got["log"]["autocast_in_forward"]
    check(len(fwd) > 0 and all(on for on, _ in fwd),
          "The model's forward ran with autocast disabled: wrap the forward pass in "
          "torch.autocast(device.type, dtype=amp_dtype).", misconception="no_autocast")
    check(all(dt == expected_dtype for _, dt in fwd),
          f"The forward ran under autocast with dtype {fwd[0][1]}; use the amp_dtype "
          f"argument ({expected_dtype} in this run).", misconception="autocast_dtype")
    check(not any(got["log"]["autocast_in_backward"]),
          "Backward ran while autocast was still enabled. Autocast should wrap only the "
          "forward pass (and the loss); leave the `with torch.autocast(...)` block "
          "before calling backward.", misconception="autocast_backward")


@pytest.mark.rules("clip_after_unscale")
@pytest.mark.points(0.5)
@pytest.mark.timeout(60)
def test_default_max_grad_norm(sandbox):
    """A call that leaves max_grad_norm at its default clips at 1.0"""
    spec = _make_spec(sandbox, seed=808, n=16, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.5},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=None)
    spec["X"] = spec["X"] * 3.0  # gradients whose norm exceeds 1.0, so the default threshold binds
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    _check_params(got, spec, ref, "16 samples in batches of 4, accum_steps=2, train_epoch called without "
                                  "max_grad_norm, gradient norms above 1.0",
                  "Called without max_grad_norm, the gradients must be clipped to a total norm of 1.0, the "
                  "default of the signature train_epoch(..., max_grad_norm=1.0).")


@pytest.mark.rules("training_mode")
@pytest.mark.points(0.5)
@pytest.mark.timeout(60)
def test_model_handed_over_in_eval_mode(sandbox):
    """A model handed over in eval mode is trained in training mode (BatchNorm uses batch statistics)"""
    spec = _make_spec(sandbox, seed=818, n=16, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.5},
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=1e4, batchnorm=True)
    spec["eval_mode"] = True
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)  # the trusted loop trains its model in training mode
    _check_params(got, spec, ref, "a model with BatchNorm1d handed over in eval mode, 16 samples in batches "
                                  "of 4, accum_steps=2",
                  "An epoch of training runs the model in training mode (BatchNorm normalizes with each "
                  "batch's statistics), whatever mode the model was in when train_epoch received it.")


@pytest.mark.rules("loss_and_autocast")
@pytest.mark.points(0.5)
@pytest.mark.timeout(60)
def test_forward_values_under_autocast(sandbox):
    """The forward's values are those of autocast's low precision (the returned loss shows them)"""
    spec = _make_spec(sandbox, seed=909, n=10, batch_size=4, accum_steps=2,
                      optimizer={"kind": "sgd", "lr": 0.0},  # the weights stay put: every batch sees them as given
                      scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                      max_grad_norm=1.0, sizes=(2, 2))
    # 2049 is exact in float32 but rounds to 2048 in bfloat16 and float16: the logits are +-1 in full
    # precision and 0 under autocast, so the two give very different losses
    spec["weights"] = [torch.tensor([[1.0, -1.0], [-1.0, 1.0]]), torch.zeros(2)]
    spec["X"] = torch.tensor([[2049.0, 2048.0], [2048.0, 2049.0]]).repeat(5, 1)
    spec["Y"] = torch.tensor([0, 1] * 5)
    got = _run(sandbox, spec)
    ref = _reference_epoch(spec)
    expected = sum(ref["batch_sums"]) / sum(ref["batch_sizes"])
    value = got["result"]
    if type(value) is float and abs(value - expected) <= 1e-2 * abs(expected):
        return
    amp = "float16" if spec["device"] == "cuda" else "bfloat16"
    with torch.no_grad():
        full = float(nn.functional.cross_entropy(spec["X"] @ spec["weights"][0].T, spec["Y"]))
    msg = (f"On inputs such as [2049, 2048], which {amp} rounds to [2048, 2048], with a learning rate of 0, "
           f"train_epoch returned {describe(value)}; the mean loss per sample computed under "
           f"torch.autocast(dtype={amp}) is {expected:.5g}.")
    _judge_mean_loss(value, {"no_autocast": (
        f"It is the loss computed in full float32 precision ({full:.5g}): the forward pass must run under "
        f"torch.autocast(device.type, dtype=amp_dtype).", full)}, msg)


@pytest.mark.rules("accumulation_windows", "loss_and_autocast")
@pytest.mark.points(1)
@pytest.mark.timeout(120)
def test_generated_setups(sandbox):
    """Generated setups: dataset sizes, batch sizes, windows, clipping thresholds and optimizers"""

    @GENERATED
    @given(st.integers(5, 23), st.integers(1, 6), st.integers(1, 4), st.sampled_from([0.05, 1.0, 1e4]),
           st.sampled_from(["sgd", "adamw"]), st.integers(0, 2 ** 16),
           st.sampled_from(["plain", "subset", "sampler"]), st.booleans(), st.sampled_from([2000, 1, 2]))
    def run(n, batch_size, accum_steps, max_grad_norm, opt, seed, loader, drop_last, growth_interval):
        optimizer = ({"kind": "sgd", "lr": 0.2, "momentum": 0.5} if opt == "sgd"
                     else {"kind": "adamw", "lr": 0.01, "weight_decay": 0.05})
        spec = _make_spec(sandbox, seed=seed, n=n, batch_size=batch_size, accum_steps=accum_steps,
                          optimizer=optimizer, scheduler={"kind": "step", "step_size": 1, "gamma": 0.8},
                          max_grad_norm=max_grad_norm, loader=loader, drop_last=drop_last,
                          growth_interval=growth_interval)
        if drop_last and len(spec["indices"] if loader != "plain" else spec["X"]) < batch_size:
            spec["drop_last"] = False  # a loader that yields no batch at all is no epoch
        got = _run(sandbox, spec)
        ref = _reference_epoch(spec)
        seen = {"plain": f"{n} samples", "subset": f"a Subset of {len(spec['indices'])} of {n} samples",
                "sampler": f"a sampler visiting {len(spec['indices'])} of {n} samples"}[loader]
        setting = (f"{seen} in batches of {batch_size}{', drop_last=True' if spec['drop_last'] else ''}, "
                   f"accum_steps={accum_steps}, max_grad_norm={max_grad_norm:g}, {opt}, "
                   f"GradScaler(growth_interval={growth_interval})")
        check(got["last_epoch"] == ref["last_epoch"],
              f"With {setting}, the epoch has {ref['last_epoch']} optimizer steps, but your scheduler stepped "
              f"{got['last_epoch']} times.")
        params = got["params"]
        check(all(bool(torch.isfinite(p).all()) for p in params),
              f"After one epoch ({setting}) your model's parameters contain inf or nan.")
        dist = _update_distance(params, ref["params"], spec["weights"])
        check(dist <= UPDATE_TOL, f"After one epoch ({setting}) your parameter updates differ from the expected "
                                  f"ones by {dist:.0%} (up to {UPDATE_TOL:.0%} is allowed).")
        expected = sum(ref["batch_sums"]) / sum(ref["batch_sizes"])
        check(type(got["result"]) is float and abs(got["result"] - expected) <= 1e-2 * abs(expected),
              f"With {setting}, train_epoch returned {describe(got['result'])}; the mean loss per sample "
              f"is {expected:.5g}.")

    run()


# ---------------------------------------------------------------- the conventions

@pytest.mark.rules("inputs_unmodified", "global_settings")
@pytest.mark.points(0.5)
@pytest.mark.timeout(60)
def test_leaves_data_and_settings_as_found(sandbox):
    """train_epoch leaves the loader's data and torch's global settings (grad mode, default dtype) as found"""
    for seed, loader, batch_size in ((606, "plain", 1), (607, "subset", 3)):
        spec = _make_spec(sandbox, seed=seed, n=9, batch_size=batch_size, accum_steps=2,
                          optimizer={"kind": "sgd", "lr": 0.1},
                          scheduler={"kind": "step", "step_size": 1, "gamma": 0.9},
                          max_grad_norm=1.0, loader=loader)
        got = _run(sandbox, spec)
        call = f"train_epoch(model, loader, ...) with a {loader} loader in batches of {batch_size}"
        check_observed(got["seen"], spec["probe"], call=call)
        for name, before, after in zip(("X", "Y"), (spec["X"], spec["Y"]), got["data_after"]):
            check(isinstance(after, torch.Tensor) and after.dtype == before.dtype and torch.equal(after, before),
                  f"After {call}, the loader's dataset tensor {name} had changed: the contract's conventions say a "
                  "function never modifies its inputs in place (the batches a loader yields may share memory with "
                  "its dataset).")
