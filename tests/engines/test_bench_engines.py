"""``python -m bench.engines`` plays random matches to the end: with Ducale's
default options (the stock rebuilt without limit) random play went on for
hundreds of thousands of actions from these seeds, and a full run's bench
command hung for 5 minutes on the second one."""

from __future__ import annotations

import pytest

from bench.engines import MAX_ACTIONS, Timings, playout
from engines import GAMES


@pytest.mark.parametrize("seed", [1, 4, 7])
def test_a_random_ducale_playout_ends(seed):
    timings = Timings()
    playout(GAMES["ducale"], 2, seed, timings)
    assert timings.playouts == 1 and 0 < timings.actions < MAX_ACTIONS


def test_a_playout_that_does_not_end_is_reported_not_waited_for(monkeypatch):
    monkeypatch.setattr("bench.engines.MAX_ACTIONS", 10)
    with pytest.raises(RuntimeError, match="dekal at 2 seats, seed 0: no end in 10 actions"):
        playout(GAMES["dekal"], 2, 0, Timings())
