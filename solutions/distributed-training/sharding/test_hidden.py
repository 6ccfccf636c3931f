"""Hidden suite for sharding (contract: distributed-training, section 2).

Plain calls, no process group: the expected indices come from
DistributedSampler itself, run here in the judge, and the known-wrong
readings of it (contiguous chunks, no padding, no shuffling, the epoch
ignored, padding with other indices) are computed here too, to name the
misconception when a student's answer matches one.
"""
import collections
import math
import random

import pytest
import torch
from torch.utils.data import DistributedSampler

from autograder.judge import as_found, check, fail


def _cases(count, seed=20261130):
    """(n, world_size, rank, epoch, seed) drawn in the judge, edge cases first (n < world size, n = 1)."""
    rng = random.Random(seed)
    out = [(1, 1, 0, 0, 0), (1, 3, 2, 1, 4), (2, 5, 4, 3, 17), (5, 5, 1, 0, 9), (17, 4, 3, 6, 2024)]
    while len(out) < count:
        w = rng.randint(1, 5)
        out.append((rng.randint(1, 40), w, rng.randint(0, w - 1), rng.randint(0, 6), rng.randint(0, 10_000)))
    return out


def _expected(n, w, rank, epoch, seed):
    sampler = DistributedSampler(range(n), num_replicas=w, rank=rank, shuffle=True, seed=seed, drop_last=False)
    sampler.set_epoch(epoch)
    return list(sampler)


def _perm(n, epoch, seed):
    g = torch.Generator()
    g.manual_seed(seed + epoch)
    return torch.randperm(n, generator=g).tolist()


def _pad(idx, total):
    pad = total - len(idx)
    return idx + (idx * math.ceil(pad / len(idx)))[:pad] if pad > 0 else idx


def _wrong_shards(n, w, rank, epoch, seed):
    per = math.ceil(n / w)
    total = per * w
    perm = _perm(n, epoch, seed)
    padded = _pad(perm, total)
    return {
        "contiguous_chunks": ("it is a contiguous block of the shuffled list; DistributedSampler deals the "
                              "indices out like cards: rank r takes positions r, r + world_size, ...",
                              padded[rank * per:(rank + 1) * per]),
        "ignores_epoch": ("it is the order of epoch 0: the shuffle is seeded with seed + epoch "
                          "(that is what set_epoch is for)", _pad(_perm(n, 0, seed), total)[rank:total:w]),
        "no_padding": ("the padding is missing: when n is not a multiple of world_size, the first indices of the "
                       "permutation are repeated at its end so that every rank gets ceil(n / world_size)",
                       perm[rank::w]),
        "no_shuffle": ("the indices were not shuffled (shuffle=True is the default)",
                       _pad(list(range(n)), total)[rank:total:w]),
        "pad_with_last": ("the padding repeats the wrong indices: DistributedSampler pads with the *first* "
                          "indices of the permutation", (perm + [perm[-1]] * (total - n))[rank:total:w]),
        "pads_from_tail": ("the padding repeats the last indices of the permutation; DistributedSampler pads "
                           "with its *first* ones", (perm + (perm[::-1] * total)[:total - n][::-1])[rank:total:w]),
        "drops_tail": ("the tail was dropped (as drop_last=True does): with drop_last=False the permutation is "
                       "padded up to a multiple of world_size instead, so no index is left out",
                       perm[: (n // w) * w][rank::w]),
        "python_shuffle": ("the order comes from Python's random module; DistributedSampler shuffles with a "
                           "torch.Generator seeded with seed + epoch (torch.randperm)", _py_perm(n, w, rank, epoch,
                                                                                                  seed)),
        "pads_per_rank": ("each rank padded its own shard; DistributedSampler pads the whole permutation once, "
                          "before dealing it out, so the padding lands on the last ranks only",
                          _pad(perm[rank::w], per) if perm[rank::w] else perm[:per]),
    }


def _py_perm(n, w, rank, epoch, seed):
    idx = list(range(n))
    random.Random(seed + epoch).shuffle(idx)
    return _pad(idx, math.ceil(n / w) * w)[rank::w]


def _explain(mismatches, candidates, answers=()):
    """The (key, why) of the one known mistake that explains every answer, else None.

    A mistake is a hypothesis: it must give every answer the student gave, the wrong ones and the right
    ones (``answers``: every (case, got), mismatches included). Small cases can make two mistakes give the
    same answer, so a diagnosis is only given when exactly one mistake accounts for them all.
    """
    keys = None
    for case, got in list(answers) or mismatches:
        fits = {key for key, (_, value) in candidates(*case).items() if got == value}
        keys = fits if keys is None else keys & fits
    if keys is not None and len(keys) == 1:  # two mistakes that explain every mismatch: name neither
        key = next(iter(keys))
        return key, candidates(*mismatches[0][0])[key][0]
    return None


@pytest.mark.rules("shard_indices")
@pytest.mark.points(3)
def test_shard_indices_match_distributed_sampler(student):
    """shard_indices matches DistributedSampler for many sizes, ranks, epochs and seeds"""
    mismatches, answers = [], []
    for case in _cases(30):
        got = student.shard_indices(*case)
        check(isinstance(got, list), f"shard_indices{case} returned a {type(got).__name__}; return a plain list "
              "of ints.", misconception="types")
        answers.append((case, got))
        if got != _expected(*case):
            mismatches.append((case, got))
    if not mismatches:
        return
    (n, w, rank, epoch, seed), got = mismatches[0]
    msg = (f"shard_indices(n={n}, world_size={w}, rank={rank}, epoch={epoch}, seed={seed}) returned {got[:12]}"
           + ("..." if len(got) > 12 else "")
           + f", which is not what DistributedSampler gives this rank ({len(_expected(n, w, rank, epoch, seed))} "
           f"indices); {len(mismatches)} of 30 cases differ.")
    found = _explain(mismatches, _wrong_shards, answers)
    if found:
        fail(msg + " It looks like " + found[1] + ".", misconception=found[0])
    fail(msg + " Compare with the sampler itself: list(DistributedSampler(range(n), num_replicas=..., rank=..., "
               "seed=...)) after set_epoch(epoch).")


@pytest.mark.rules("shard_indices", "epoch_orders")
@pytest.mark.points(2)
def test_every_example_once_per_epoch(student):
    """Across ranks, with padding removed, every example appears exactly once"""
    for n, w, epoch, seed in [(10, 3, 2, 5), (7, 4, 0, 1), (2, 3, 1, 9), (12, 4, 3, 0)]:
        seen = []
        for rank in range(w):
            shard = student.shard_indices(n, w, rank, epoch, seed)
            mask = student.padding_mask(n, w, rank)
            check(isinstance(shard, list) and isinstance(mask, list),
                  f"shard_indices and padding_mask return plain lists; with n={n} and {w} ranks they returned "
                  f"{type(shard).__name__} and {type(mask).__name__}.", misconception="types")
            per = math.ceil(n / w)
            check(len(mask) == len(shard) or len(shard) == per,
                  f"With n={n} and {w} ranks, rank {rank}'s shard_indices has {len(shard)} indices; "
                  f"DistributedSampler gives every rank ceil(n / world_size) = {per} (it pads, it never drops).")
            # bound student-sized values before any work on them (the judge's own time counts too)
            check(len(shard) <= 2 * math.ceil(n / w) + 8 and len(mask) <= 2 * math.ceil(n / w) + 8,
                  f"With n={n} and {w} ranks, rank {rank}'s shard_indices or padding_mask returned {len(shard)} and "
                  f"{len(mask)} entries; a shard holds ceil(n / world_size) = {math.ceil(n / w)}.")
            check(len(mask) == len(shard),
                  f"With n={n} and {w} ranks, rank {rank}'s padding_mask has {len(mask)} entries for a shard of "
                  f"{len(shard)} indices: give one flag per position.", misconception="mask_length")
            seen += [i for i, pad in zip(shard, mask) if not pad]
        if sorted(seen) != list(range(n)):
            missing = sorted(set(range(n)) - set(seen))
            counts = collections.Counter(seen)  # linear: seen.count(i) for every i was quadratic
            twice = sorted(i for i, k in counts.items() if k > 1)
            fail(f"With n={n}, {w} ranks, epoch {epoch}: after dropping the positions padding_mask flags, the "
                 f"ranks' shards should hold every example exactly once; missing {missing[:8]}, counted twice "
                 f"{twice[:8]}. Padding duplicates must be flagged, and only they.", misconception="")


def _wrong_masks(n, w, rank):
    per = math.ceil(n / w)
    pad = per * w - n
    return {
        "pad_first_ranks": ("the padding is put on the first ranks; it is at the end of the padded list, so it "
                            "lands on the last ranks", [j == per - 1 and rank < pad for j in range(per)]),
        "pad_every_rank": ("every rank's last position is flagged; only the last world_size * ceil(n / "
                           "world_size) - n positions of the padded list are padding",
                           [j == per - 1 and pad > 0 for j in range(per)]),
    }


@pytest.mark.rules("padding_mask")
@pytest.mark.points(2)
def test_padding_mask(student):
    """padding_mask flags exactly the padding duplicates"""
    mismatches, answers = [], []
    for n, w in [(10, 3), (10, 4), (5, 3), (2, 3), (1, 4), (9, 3), (13, 5)]:
        per = math.ceil(n / w)
        for rank in range(w):
            got = student.padding_mask(n, w, rank)
            answers.append(((n, w, rank), got))
            if got != [rank + j * w >= n for j in range(per)]:
                mismatches.append(((n, w, rank), got))
    if not mismatches:
        return
    (n, w, rank), got = mismatches[0]
    msg = (f"padding_mask(n={n}, world_size={w}, rank={rank}) returned {got}, expected {math.ceil(n / w)} "
           "flags, one per position of the rank's shard, True only at padding duplicates.")
    found = _explain(mismatches, _wrong_masks, answers)
    if found:
        fail(msg + " It looks like " + found[1] + ".", misconception=found[0])
    fail(msg + " Position j of rank r is position r + j * world_size of the padded list; the positions from n "
               "on are padding.")


@pytest.mark.rules("epoch_orders")
@pytest.mark.points(2)
def test_epoch_orders_change_every_epoch(student):
    """epoch_orders follows set_epoch: a new order every epoch, reproducible"""
    for n, w, rank, epochs, seed in [(11, 3, 1, 4, 7), (6, 2, 0, 3, 123)]:
        expected = [_expected(n, w, rank, e, seed) for e in range(epochs)]
        got = student.epoch_orders(n, w, rank, epochs, seed)
        if got == expected:
            continue
        msg = (f"epoch_orders(n={n}, world_size={w}, rank={rank}, epochs={epochs}, seed={seed}) does not give "
               "the indices a correct training loop visits.")
        if isinstance(got, list) and len(got) == epochs and all(o == expected[0] for o in got):
            fail(msg + " Every epoch has the same order: call sampler.set_epoch(epoch) at the start of each "
                 "epoch, or the sampler reshuffles identically every time.", misconception="no_set_epoch")
        if got == [_expected(n, w, rank, e + 1, seed) for e in range(epochs)]:
            fail(msg + " Your epochs are numbered from 1; they start at 0.", misconception="epochs_from_one")
        if got == [_expected(n, w, rank, max(e - 1, 0), seed) for e in range(epochs)]:
            fail(msg + " Each epoch uses the previous epoch's order: set_epoch must be called before the "
                 "epoch's loop, not after it.", misconception="set_epoch_late")
        fail(msg + f" Expected {expected[0][:8]}... in epoch 0.")


@pytest.mark.rules("plain_types", "global_settings")
@pytest.mark.points(1)
def test_plain_python_types(student, sandbox):
    """The functions return plain lists of Python ints and bools, and leave torch's global settings as found"""
    shard = as_found(sandbox, student.shard_indices, 9, 2, 1, 0, 0, call="shard_indices(9, 2, 1, 0, 0)")
    mask = as_found(sandbox, student.padding_mask, 9, 2, 1, call="padding_mask(9, 2, 1)")
    orders = as_found(sandbox, student.epoch_orders, 5, 2, 0, 2, 0, call="epoch_orders(5, 2, 0, 2, 0)")
    check(isinstance(shard, list) and all(type(i) is int for i in shard),
          f"shard_indices returned {type(shard).__name__} of "
          f"{sorted({type(i).__name__ for i in shard}) if isinstance(shard, list) else '?'}; return a list of "
          "Python ints (tolist() converts a tensor).", misconception="types")
    check(isinstance(mask, list) and all(type(b) is bool for b in mask),
          "padding_mask must return a list of Python bools.", misconception="types")
    check(isinstance(orders, list) and all(isinstance(o, list) and all(type(i) is int for i in o) for o in orders),
          "epoch_orders must return a list of lists of Python ints (a DataLoader yields tensors: convert "
          "them with int(...)).", misconception="types")
