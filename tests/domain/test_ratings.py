"""Ratings of rated matches (service/domain/ratings.py): openskill's
Plackett-Luce numbers, ranks from outcomes (a resignation last, ties shared,
an abort not rated), the display number and the provisional flag."""

from __future__ import annotations

from typing import Any

import pytest
from openskill.models import PlackettLuce

from engines import GAMES
from service.domain.endings import ended_early
from service.domain.ratings import (
    PROVISIONAL_SIGMA,
    Rating,
    display,
    ending,
    ranks_of,
    rated,
    shown,
)

DEKAL = GAMES["dekal"]


def ended_match(n_seats: int, ended: dict[str, Any], players: list[str | None]) -> dict:
    """A match the service ended itself (``ended``), seats held by ``players``."""
    seats = [{"name": p or "bot", "player": p} if p else {"name": "bot"} for p in players]
    return {"seats": seats, "state": None, "ended": ended, "rated": True}


def test_a_new_player_shows_1000_and_is_provisional():
    assert display(Rating()) == 1000
    seen = shown(Rating())
    assert seen == {"rating": 1000, "mu": 25.0, "sigma": 25 / 3, "matches": 0, "provisional": True}


def test_the_display_number_is_the_ordinal_scaled():
    assert display(Rating(30.0, 5.0, 12)) == 1000 + 40 * (30 - 15)
    assert not shown(Rating(30.0, PROVISIONAL_SIGMA, 12))["provisional"]
    assert shown(Rating(30.0, PROVISIONAL_SIGMA + 0.01, 12))["provisional"]


def test_ties_share_a_rank_and_a_resignation_ranks_last():
    outcome = {"winners": [2], "ranking": [[2], [0, 3], [1]], "resigned": [1]}
    assert ranks_of(outcome, 4) == [2, 3, 1, 2]


def test_an_aborted_match_has_no_ranks():
    assert ranks_of(ended_early(2, [], "abort", 0), 2) is None
    assert ranks_of(None, 2) is None


def test_an_outcome_with_winners_only_ranks_the_others_second():
    assert ranks_of({"winners": [1]}, 3) == [2, 1, 2]


def test_the_numbers_are_openskills_plackett_luce():
    match = ended_match(2, ended_early(2, [0], "resignation", 0), ["ada", "bob"])
    before = {"ada": Rating(27.0, 7.0, 3)}
    changes = rated(DEKAL, match, before)
    model = PlackettLuce()
    expected = model.rate(
        [[model.rating(mu=27.0, sigma=7.0)], [model.rating()]], ranks=[2, 1]
    )  # ada resigned: last
    assert [c["rank"] for c in changes] == [2, 1]
    assert changes[0]["before"] == Rating(27.0, 7.0, 3)
    assert changes[0]["after"] == Rating(expected[0][0].mu, expected[0][0].sigma, 4)
    assert changes[1]["before"] == Rating()
    assert changes[1]["after"] == Rating(expected[1][0].mu, expected[1][0].sigma, 1)
    assert changes[0]["after"].mu < 27.0
    assert changes[1]["after"].mu > 25.0 and changes[1]["after"].sigma < 25 / 3


def test_a_resigner_loses_rating_and_the_one_left_in_gains():
    match = ended_match(2, ended_early(2, [1], "resignation", 1), ["ada", "bob"])
    ada, bob = rated(DEKAL, match, {})
    assert display(ada["after"]) > display(ada["before"]) == 1000
    assert bob["after"].mu < bob["before"].mu


def test_three_players_in_a_tie_move_alike():
    outcome = {"winners": [0, 1], "ranking": [[0, 1], [2]], "resigned": []}
    match = ended_match(3, outcome, ["a", "b", "c"])
    a, b, c = rated(DEKAL, match, {})
    assert a["after"] == b["after"] and a["after"].mu > 25 > c["after"].mu


def test_only_the_players_seats_are_rated_and_one_player_is_not_rated():
    outcome = {"winners": [1], "ranking": [[1], [0], [2]], "resigned": []}
    with_bot = ended_match(3, outcome, ["a", None, "c"])
    changes = rated(DEKAL, with_bot, {})
    assert [(c["seat"], c["player"], c["rank"]) for c in changes] == [(0, "a", 2), (2, "c", 3)]
    assert changes[0]["after"].mu > changes[1]["after"].mu
    alone = ended_match(2, ended_early(2, [1], "resignation", 1), ["a", None])
    assert rated(DEKAL, alone, {}) == []


def test_an_aborted_match_is_not_rated():
    match = ended_match(2, ended_early(2, [], "abort", 0), ["ada", "bob"])
    assert rated(DEKAL, match, {}) == []


class Known:
    """Ratings as a store would keep them."""

    def __init__(self, known: dict[str, Rating]) -> None:
        self.known = known
        self.asked: list[tuple[str, list[str]]] = []

    def current(self, game: str, player_ids: list[str]) -> dict[str, Rating]:
        self.asked.append((game, player_ids))
        return {p: self.known[p] for p in player_ids if p in self.known}


def test_the_ending_hook_rates_a_rated_match_once_in_its_match_over_event():
    known = Known({"bob": Rating(30.0, 4.0, 20)})
    match = ended_match(2, ended_early(2, [0], "resignation", 0), ["ada", "bob"])
    match["seats"][1]["bot_account"] = True
    events = [{"type": "resigned", "seat": 0}, {"type": "match_over", "winners": [1]}]
    amended = ending(known.current)(DEKAL, match, events)
    assert amended[0] == events[0] and known.asked == [("dekal", ["ada", "bob"])]
    ratings = amended[1]["ratings"]
    assert [(r["seat"], r["player"]) for r in ratings] == [(0, "ada"), (1, "bob")]
    assert ratings[0]["before"]["rating"] == 1000 and ratings[0]["before"]["provisional"]
    assert ratings[1]["before"]["matches"] == 20 and ratings[1]["after"]["matches"] == 21
    assert [c["bot"] for c in match["ratings"]] == [False, True]
    assert match["ratings"][1]["after"]["matches"] == 21


@pytest.mark.parametrize("rated_flag", [False, True])
def test_the_ending_hook_leaves_other_writes_alone(rated_flag):
    known = Known({})
    match = ended_match(2, ended_early(2, [0], "resignation", 0), ["ada", "bob"])
    match["rated"] = rated_flag
    events = [{"type": "rematch_offered", "seat": 0}]
    assert ending(known.current)(DEKAL, match, events) == events
    unrated = dict(match, rated=False)
    over = [{"type": "match_over"}]
    assert ending(known.current)(DEKAL, unrated, over) == over
    assert known.asked == [] and "ratings" not in match
