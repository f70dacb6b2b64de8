"""How resigned seats rank in a played-out outcome (service/domain/endings.py)."""

from __future__ import annotations

from service.domain.endings import ended_early, rank_resigned_last


def test_a_resigned_seat_the_bot_led_to_victory_ranks_last_lowest_score_wins():
    # Dékal-like: lowest wins; the bot playing resigned seat 0 scored best
    outcome = {"winners": [0], "scores": [10, 30, 20, 30], "cards_left": [1, 2, 3, 4]}
    ranked = rank_resigned_last(outcome, 4, [0])
    assert ranked["winners"] == [2]
    assert ranked["ranking"] == [[2], [1, 3], [0]]
    assert ranked["cards_left"] == [1, 2, 3, 4] and ranked["resigned"] == [0]


def test_a_resigned_seat_ranks_last_highest_score_wins():
    # Gaudí-like: most points wins; seat 2 resigned, then seat 1
    outcome = {"winners": [1, 2], "scores": [3, 9, 9, 1]}
    ranked = rank_resigned_last(outcome, 4, [2, 1])
    assert ranked["winners"] == [0]
    assert ranked["ranking"] == [[0], [3], [1], [2]]  # the earliest to resign is last


def test_winners_still_in_stay_winners():
    outcome = {"winners": [3], "scores": [5, 5, 5, 1]}
    ranked = rank_resigned_last(outcome, 4, [1])
    assert ranked["winners"] == [3]
    assert ranked["ranking"] == [[3], [0, 2], [1]]


def test_resignations_that_leave_one_seat_in_make_it_the_winner():
    assert ended_early(3, [2, 0], "resignation", 0) == {
        "winners": [1],
        "ranking": [[1], [0], [2]],
        "resigned": [2, 0],
        "ended_by": "resignation",
        "by": 0,
    }


def test_an_abort_has_no_winner():
    assert ended_early(2, [], "abort", 1)["winners"] == []
