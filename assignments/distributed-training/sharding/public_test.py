"""Public tests for sharding. The hidden suite draws many (n, world size,
rank, epoch, seed) combinations and checks padding and epoch orders too."""
from torch.utils.data import DistributedSampler


def test_shard_indices_small_case(student):
    """shard_indices matches DistributedSampler for n=10, 3 ranks"""
    for rank in range(3):
        sampler = DistributedSampler(range(10), num_replicas=3, rank=rank, shuffle=True, seed=0)
        sampler.set_epoch(1)
        got = student.shard_indices(10, 3, rank, 1, 0)
        assert got == list(sampler), f"rank {rank}: expected {list(sampler)}, got {got}"


def test_padding_mask_even_split(student):
    """padding_mask is all False when the ranks split the data evenly"""
    got = student.padding_mask(8, 2, 1)
    assert got == [False] * 4, f"padding_mask(8, 2, 1) returned {got}; 8 examples split evenly need no padding"


def test_epoch_orders_two_epochs(student):
    """epoch_orders for n=10, 2 ranks, 2 epochs matches DistributedSampler with set_epoch"""
    sampler = DistributedSampler(range(10), num_replicas=2, rank=1, shuffle=True, seed=3)
    expected = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        expected.append(list(sampler))
    got = student.epoch_orders(10, 2, 1, 2, 3)
    assert got == expected, (f"epoch_orders(10, 2, 1, 2, 3) returned {got}, expected {expected}: a training loop "
                             "calls sampler.set_epoch(epoch) before each epoch, so the order changes")
