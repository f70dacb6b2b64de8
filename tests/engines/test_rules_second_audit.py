"""Issue 33, a second audit against the rulebooks: states stored before its
three corrections (RULES.md §3 and §4) play on under them. The rules
themselves are tested with their games (``test_ducale.py``,
``test_gaudi.py``)."""

from __future__ import annotations

import random

from engines.core import State
from engines.ducale import GAME as DUCALE
from engines.gaudi import GAME as GAUDI
from tests.engines import conformance


def play_out(game, state: State, seed: int, limit: int = 20_000) -> None:
    """Random legal actions until the match ends (or ``limit`` actions)."""
    rng = random.Random(seed)
    for _ in range(limit):
        if not (seats := game.to_act(state)):
            return
        game.apply(state, seats[0], rng.choice(game.legal_actions(state, seats[0])))


# --- Ducale: a stock rebuilt before the correction kept the top discard ------


def old_rebuilt_ducale() -> State:
    """A round as the old code left it after a rebuild: the stock rebuilt from
    the discard pile but its top card, which stayed on the pile."""
    state = conformance.new_match(DUCALE, 2, 3, {"target_score": 100})
    del state["options"]["max_stock_rebuilds"]  # older still: before the option
    state["hands"] = [["5S", "9D", "KH"], ["KS", "2H", "7C"]]
    state["table"] = []
    state["stock"] = ["3C", "4C"]
    state["discard"] = ["QD"]
    state["stock_rebuilds"] = 1
    state["phase"] = "draw"
    state["turn"] = 0
    return state


def test_a_ducale_round_whose_old_rebuild_kept_the_top_discard_plays_on() -> None:
    """The card the old rebuild left on the pile may still be taken, and the
    next rebuild takes it with the rest, as the corrected rule says."""
    state = old_rebuilt_ducale()
    assert not DUCALE.view_schema().validate(DUCALE.view(state, 0))
    assert {"type": "draw"} in DUCALE.legal_actions(state, 0)
    DUCALE.apply(state, 0, {"type": "draw"})
    DUCALE.apply(state, 0, {"type": "discard", "card": "KH"})
    DUCALE.apply(state, 1, {"type": "draw"})
    DUCALE.apply(state, 1, {"type": "discard", "card": "KS"})
    assert state["stock"] == [] and state["discard"] == ["QD", "KH", "KS"]
    events = DUCALE.apply(state, 0, {"type": "draw"})
    assert events[0] == {"type": "stock_rebuilt", "stock_size": 3, "rebuilds": 2}
    assert state["discard"] == []
    # A whole match from such a round: the old rebuild left the top discard,
    # the stock holds the rest.
    stored = conformance.new_match(DUCALE, 3, 2, {"target_score": 100})
    del stored["options"]["max_stock_rebuilds"]
    stored["stock_rebuilds"] = 1
    play_out(DUCALE, stored, 2)
    assert not DUCALE.outcome_schema().validate(DUCALE.outcome(stored))


# --- Gaudí: states stored before the children's game -------------------------


def old_gaudi(n_players: int, seed: int, options: dict) -> State:
    """A Gaudí state as the code before the children's game stored it: no
    ``children`` option, no ``laid_this_turn``."""
    state = conformance.new_match(GAUDI, n_players, seed, options)
    del state["children"], state["laid_this_turn"]
    return state


def test_a_gaudi_match_stored_before_the_childrens_game_plays_on() -> None:
    """An old state reads as the game for grown-ups (``children`` false, no tile
    laid this turn), rebuilds from its views, and plays to its end unchanged in
    shape: the new keys are read with their defaults, never written."""
    for n_players, options in ((2, {"short_game": True}), (4, {"beginner": True})):
        stored = old_gaudi(n_players, 9, options)
        for seat in (None, *range(n_players)):
            seen = GAUDI.view(stored, seat)
            assert seen["children"] is False and seen["laid_this_turn"] == 0
            assert not GAUDI.view_schema().validate(seen)
            again = GAUDI.state_from_view(seen, seat, random.Random(0))
            assert GAUDI.view(again, seat) == seen
        assert all(a["type"] != "end_turn" for a in GAUDI.legal_actions(stored, 0))
        play_out(GAUDI, stored, 9)
        assert "children" not in stored and "laid_this_turn" not in stored
        result = GAUDI.outcome(stored)
        assert not GAUDI.outcome_schema().validate(result) and result["winners"]
