"""How a distributed check names the rank at fault (autograder.judge.ranks), from the ranks' plain reports."""

from __future__ import annotations

import pytest

from autograder.errors import StudentCrash
from autograder.judge.ranks import rank_values

MESH = ("RuntimeError: Gloo connectFullMesh failed with [pair.cc:553] Connection closed by peer [127.0.0.1]:20665. "
        "This is typically caused by a remote worker crashing.")


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0)])
def test_a_rank_that_exits_is_blamed_even_when_a_slower_one_was_still_connecting(order):
    """Rank 1 returned from its set-up and ended its process while another rank was still connecting the
    mesh (seen in CI under load): that rank's "set-up failed, closed by peer" is the exit's consequence."""
    entries = {
        order[0]: {"status": "setup", "error": {"type": "RuntimeError", "message": MESH}},
        order[1]: {"status": "exited", "exit": "exit code 0"},
        order[2]: {"status": "error", "error": {"type": "RuntimeError", "message": "Connection reset by peer"}},
    }
    report = {"ranks": [{"rank": i, **entries[i]} for i in range(3)]}
    with pytest.raises(StudentCrash) as e:
        rank_values(report, 3, "ddp_step")
    assert f"rank {order[1]} ended its process before returning (exit code 0)" in str(e.value)
    assert "could not start its process group" not in str(e.value)
