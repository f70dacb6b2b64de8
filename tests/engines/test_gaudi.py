"""The Gaudí tile game, rule by rule (RULES.md §3).

Most tests lay out a small table by hand. Coordinates are axial; useful facts
from the geometry: the starfish site anchored at (0, 0) is {(0,0), (1,0),
(0,1)}; the snail site of (0, 0) is anchored at (0, -1): {(0,-1), (1,-1),
(0,0)}; its jellyfish site is anchored at (-1, 0): {(-1,0), (0,0), (-1,1)}.
"""

from __future__ import annotations

import copy
import itertools
import random
from collections import Counter

import pytest
from marshmallow import ValidationError

from engines.core import IllegalAction
from engines.gaudi import GAME, rules
from engines.gaudi.geometry import frontier, neighbours
from tests.engines.conformance import assert_illegal_leaves_state, new_match

NEUTRAL = {"animal": "snail", "colour": "green"}


def table(
    tiles: dict,
    hands: list[list[str]],
    *,
    pile: list[str] | None = None,
    objectives: list[dict] | None = None,
    beginner: bool = False,
    active: int = 0,
) -> dict:
    """A match state with this table, these hands and this pile."""
    state = new_match(GAME, len(hands), 0, {"beginner": beginner})
    state["board"] = [{"q": q, "r": r, "tile": tile} for (q, r), tile in tiles.items()]
    state["hands"] = [list(hand) for hand in hands]
    state["pile"] = list(pile if pile is not None else ["GGG"] * 20)
    state["objectives"] = [dict(o) for o in objectives or [NEUTRAL] * len(hands)]
    state["active"] = active
    return state


def place(*tiles: tuple[str, int, int]) -> dict:
    return {"type": "place", "tiles": [{"tile": t, "q": q, "r": r} for t, q, r in tiles]}


def refused(state: dict, action: dict, seat: int | None = None) -> str:
    """The reason an illegal action is refused (the state must stay untouched)."""
    seat = state["active"] if seat is None else seat
    before = copy.deepcopy(state)
    with pytest.raises(IllegalAction) as info:
        GAME.apply(state, seat, action)
    assert state == before
    assert info.value.code == "illegal_action"
    return info.value.message


def completed(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "animal_completed"]


# -- Material and setup ---------------------------------------------------------


def test_box_holds_84_tiles_of_27_kinds():
    assert len(rules.TILE_KINDS) == 27
    assert sum(rules.BOX.values()) == 84
    for kind, count in rules.BOX.items():
        assert count == (4 if len(set(kind)) == 1 else 3)


@pytest.mark.parametrize("n_players", range(2, 7))
def test_setup_accounts_for_every_tile_of_the_box(n_players):
    state = new_match(GAME, n_players, 7)
    tiles = [b["tile"] for b in state["board"]] + state["pile"]
    tiles += [t for hand in state["hands"] for t in hand]
    assert Counter(tiles) == Counter(rules.BOX)


def test_start_tile_has_three_colours_on_the_origin():
    for seed in range(60):
        state = new_match(GAME, 2 + seed % 5, seed)
        [start] = state["board"]
        assert (start["q"], start["r"]) == (0, 0)
        assert sorted(start["tile"]) == ["B", "G", "O"]


@pytest.mark.parametrize("n_players", range(2, 7))
def test_each_player_draws_three_secret_tiles(n_players):
    state = new_match(GAME, n_players, 3)
    assert [len(hand) for hand in state["hands"]] == [3] * n_players
    assert len(state["pile"]) == 84 - 1 - 3 * n_players
    for seat in range(n_players):
        view = GAME.view(state, seat)
        assert view["hand"] == state["hands"][seat]
        assert [p["hand_size"] for p in view["players"]] == [3] * n_players


@pytest.mark.parametrize("n_players", [2, 3])
def test_two_or_three_players_hold_all_different_objectives(n_players):
    for seed in range(40):
        objectives = new_match(GAME, n_players, seed)["objectives"]
        assert len({o["animal"] for o in objectives}) == n_players
        assert len({o["colour"] for o in objectives}) == n_players


@pytest.mark.parametrize("n_players", [4, 5, 6])
def test_four_to_six_players_draw_from_all_twelve_cards(n_players):
    duplicates = 0
    for seed in range(40):
        objectives = new_match(GAME, n_players, seed)["objectives"]
        animals = Counter(o["animal"] for o in objectives)
        colours = Counter(o["colour"] for o in objectives)
        assert max(animals.values()) <= 2 and max(colours.values()) <= 2
        assert set(animals) <= {"starfish", "snail", "jellyfish"}
        assert set(colours) <= {"orange", "green", "blue"}
        duplicates += max(animals.values()) == 2
    assert duplicates


@pytest.mark.parametrize(("n_players", "markers"), [(2, 35), (3, 25), (4, 25), (5, 15), (6, 15)])
def test_markers_by_player_count(n_players, markers):
    state = new_match(GAME, n_players, 0)
    assert state["markers"] == [markers] * n_players
    assert [p["markers_left"] for p in GAME.view(state, None)["players"]] == state["markers"]


def test_seat_0_plays_first_by_default():
    assert GAME.to_act(new_match(GAME, 4, 11)) == [0]


def test_first_player_option_names_a_seat_or_random():
    assert GAME.to_act(new_match(GAME, 3, 0, {"first_player": 2})) == [2]
    firsts = {
        GAME.to_act(new_match(GAME, 4, seed, {"first_player": "random"}))[0] for seed in range(40)
    }
    assert firsts == {0, 1, 2, 3}


def test_first_player_beyond_the_seats_is_refused():
    with pytest.raises(IllegalAction) as info:
        new_match(GAME, 3, 0, {"first_player": 3})
    assert info.value.code == "invalid_options"


@pytest.mark.parametrize("n_players", [1, 7])
def test_player_count_outside_2_to_6_is_refused(n_players):
    with pytest.raises(IllegalAction) as info:
        new_match(GAME, n_players, 0)
    assert info.value.code == "invalid_options"


@pytest.mark.parametrize(
    "options",
    [
        {"first_player": "youngest"},
        {"first_player": -1},
        {"first_player": True},
        {"first_player": 6},
        {"short_game": "yes"},
        {"colour_blind": True},
    ],
)
def test_options_schema_refuses_bad_options(options):
    with pytest.raises(ValidationError):
        GAME.options_schema().load(options)


def test_options_have_defaults():
    assert GAME.options_schema().load({}) == {
        "short_game": False,
        "beginner": False,
        "children": False,
        "first_player": 0,
    }


def test_short_game_plays_fifty_tiles():
    for n_players in range(2, 7):
        state = new_match(GAME, n_players, n_players, {"short_game": True})
        total = 1 + len(state["pile"]) + sum(len(hand) for hand in state["hands"])
        assert total == 50
        assert len(GAME.view(state, None)["board"]) == 1


# -- The children's game (option ``children``) ------------------------------------


def children_table(tiles: dict, hands: list[list[str]], pile: list[str] | None = None) -> dict:
    """A children's game with this table, these hands and this pile."""
    state = new_match(GAME, len(hands), 0, {"children": True})
    state["board"] = [{"q": q, "r": r, "tile": tile} for (q, r), tile in tiles.items()]
    state["hands"] = [list(hand) for hand in hands]
    state["pile"] = list(pile if pile is not None else rules.TILE_KINDS)
    return state


def test_children_game_has_no_objectives_no_markers_and_one_shared_pavement():
    """ "no objective cards and no markers"; "the players build one pavement
    together"."""
    assert GAME.options_schema().load({"children": True})["children"] is True
    state = new_match(GAME, 3, 5, {"children": True})
    assert state["objectives"] == [] and state["markers"] == [0, 0, 0]
    for seat in (None, 0, 1):
        seen = GAME.view(state, seat)
        assert GAME.view_schema().validate(seen) == {}
        assert seen["children"] is True and seen["laid_this_turn"] == 0
        assert all(p["objectives"] is None and p["points"] is None for p in seen["players"])
        assert all(p["markers_left"] == 0 for p in seen["players"])


def test_children_game_only_touching_and_colour_matching_hold():
    """ "Only the touching and colour-matching conditions hold: any number of
    tiles of the hand per turn (at least one), in any shape, with no condition
    on completed animals". Three tiles that touch only the start tile, one on
    each side, complete nothing: refused to a grown-up, laid by a child."""
    tiles = [("OOO", 1, 0), ("BBB", -1, 0), ("BGB", 0, -1)]
    grown_up = table({(0, 0): "OGB"}, [["OOO", "BBB", "BGB"], ["GGG"]])
    assert refused(grown_up, place(*tiles))
    state = children_table({(0, 0): "OGB"}, [["OOO", "BBB", "BGB"], ["GGG"]])
    assert refused(state, place(("BBB", 1, 0)))  # colours still match: starfish orange
    assert refused(state, place(("OOO", 2, 0)))  # and tiles still touch the table
    for i, tile in enumerate(tiles):
        assert place(tile) in GAME.legal_actions(state, 0)
        events = GAME.apply(state, 0, place(tile))
        assert not completed(events)
        if i < 2:
            assert GAME.to_act(state) == [0] and state["laid_this_turn"] == i + 1
    assert [e["type"] for e in events][-3:] == ["refill", "drew", "turn"]
    assert GAME.to_act(state) == [1] and len(state["hands"][0]) == 3
    assert state["markers"] == [0, 0] and all(a["marker"] is None for a in state["animals"])


def test_children_game_a_child_stops_after_any_number_of_tiles():
    """At least one tile, then as many as the child likes: ``end_turn`` is
    offered once a tile is laid, and the hand is refilled to 3."""
    state = children_table({(0, 0): "OGB"}, [["OOO", "BBB", "GGG"], ["GGG"]])
    assert {"type": "end_turn"} not in GAME.legal_actions(state, 0)
    assert refused(state, {"type": "end_turn"})
    assert refused(state, place(("OOO", 1, 0), ("BBB", -1, 0)))  # one tile at a time
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert {"type": "end_turn"} in GAME.legal_actions(state, 0)
    events = GAME.apply(state, 0, {"type": "end_turn"})
    assert events[0] == {"type": "end_turn", "seat": 0}
    assert GAME.to_act(state) == [1] and state["laid_this_turn"] == 0
    assert len(state["hands"][0]) == 3


def test_children_game_ends_with_no_winner_reporting_animals_and_tiles_laid():
    """ "the game ends as above; the outcome has no winner (``winners: []``) and
    reports the number of completed animals and of tiles laid"."""
    state = children_table({(0, 0): "OGB", (1, 0): "OOO"}, [["OBB"], ["GGG", "GGG"]], pile=[])
    events = GAME.apply(state, 0, place(("OBB", 0, 1)))
    assert [e["type"] for e in completed(events)] == ["animal_completed"]
    result = GAME.outcome(state)
    assert result["winners"] == [] and result["reason"] == "hand_and_pile_empty"
    assert result["animals_completed"] == 1 and result["tiles_laid"] == 2
    assert GAME.outcome_schema().validate(result) == {}
    assert events[-1] == {"type": "match_over", **result}


# -- Placing tiles -------------------------------------------------------------


def test_tile_code_gives_its_starfish_snail_and_jellyfish_colours():
    """A tile's thirds go to the sites of their animals: rotation follows from position."""
    state = table({(0, 0): "OGB"}, [["OBB", "OGG", "BGO"], ["GGG"]])
    events = GAME.apply(state, 0, place(("OBB", 1, 0), ("OGG", 0, 1)))
    assert [{k: e[k] for k in ("q", "r", "animal", "colour")} for e in completed(events)] == [
        {"q": 0, "r": 0, "animal": "starfish", "colour": "orange"}
    ]
    state = table({(0, 0): "OGB"}, [["BGO", "OGB", "GGG"], ["GGG"]])
    events = GAME.apply(state, 0, place(("BGO", 0, -1), ("OGB", 1, -1)))
    assert [(e["animal"], e["colour"]) for e in completed(events)] == [("snail", "green")]


def test_a_tile_must_touch_the_table():
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "OOO"], ["GGG"]])
    assert "touches no tile" in refused(state, place(("OOO", 2, 0)))
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert {(b["q"], b["r"]) for b in state["board"]} == {(0, 0), (1, 0)}


def test_a_tile_must_match_the_colour_of_every_site_it_shares():
    """(1, 0) shares the starfish of (0, 0) and the jellyfish of (1, -1)."""
    state = table({(0, 0): "OGB", (1, -1): "BGO"}, [["OGB", "GBO", "OBO"], ["GGG"]])
    assert "jellyfish is blue but that jellyfish is orange" in refused(state, place(("OGB", 1, 0)))
    assert "starfish is green but that starfish is orange" in refused(state, place(("GBO", 1, 0)))
    GAME.apply(state, 0, place(("OBO", 1, 0)))
    assert state["board"][-1] == {"q": 1, "r": 0, "tile": "OBO"}


def test_a_tile_laid_earlier_in_the_turn_counts_as_table():
    """(2, 0) touches only (1, 0): it must come after it."""
    tiles = {(0, 0): "OGB", (0, 1): "OOO"}
    state = table(tiles, [["OOO", "OOO", "GGG"], ["GGG"]])
    assert "tile 1 (OOO at q=2, r=0) touches no tile" in refused(
        state, place(("OOO", 2, 0), ("OOO", 1, 0))
    )
    events = GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 2, 0)))
    assert len(completed(events)) == 1


def test_any_valid_order_of_the_same_placement_is_accepted():
    tiles = {(0, 0): "OOO", (0, 1): "OOO"}
    action = place(("OOO", 1, 1), ("OOO", 1, 0))
    listed = GAME.legal_actions(table(tiles, [["OOO", "OOO", "GGG"], ["GGG"]]), 0)
    assert sum({(t["q"], t["r"]) for t in a["tiles"]} == {(1, 1), (1, 0)} for a in listed) == 1
    for order in (action["tiles"], action["tiles"][::-1]):
        state = table(tiles, [["OOO", "OOO", "GGG"], ["GGG"]])
        GAME.apply(state, 0, {"type": "place", "tiles": order})
        assert len(state["board"]) == 4


def test_tiles_of_one_turn_must_touch_one_another():
    state = table({(0, 0): "OOO", (0, 1): "OOO"}, [["OOO", "OOO", "OOO"], ["GGG"]])
    reason = refused(state, place(("OOO", 1, 0), ("OOO", -1, 1)))
    assert "must touch one another" in reason


def _ring_around(hole: list[tuple[int, int]]) -> dict:
    return {n: "OOO" for h in hole for n in neighbours(h) if n not in hole}


def test_three_tiles_may_not_form_a_compact_block():
    hole = [(1, 0), (0, 1), (1, 1)]
    state = table(_ring_around(hole), [["OOO"] * 3, ["GGG"]])
    action = place(*[("OOO", q, r) for q, r in hole])
    assert "compact block" in refused(state, action)
    beginner = table(_ring_around(hole), [["OOO"] * 3, ["GGG"]], beginner=True)
    GAME.apply(beginner, 0, action)


def test_two_tiles_must_complete_an_animal():
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "OOO"], ["GGG"]])
    assert "at least 1 animal" in refused(state, place(("OOO", 1, 0), ("OOO", 2, 0)))
    events = GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 0, 1)))
    assert [(e["q"], e["r"], e["animal"]) for e in completed(events)] == [(0, 0, "starfish")]


def test_three_tiles_must_complete_two_animals():
    action = place(("OOO", 1, 0), ("OOO", 0, 1), ("OOO", -1, 1))
    state = table({(0, 0): "OOO"}, [["OOO"] * 3, ["GGG"]])
    assert "at least 2 animals" in refused(state, action)
    state = table({(0, 0): "OOO", (-1, 0): "OOO"}, [["OOO"] * 3, ["GGG"]])
    events = GAME.apply(state, 0, action)
    assert [(e["q"], e["r"], e["animal"]) for e in completed(events)] == [
        (0, 0, "starfish"),
        (-1, 0, "jellyfish"),
    ]


def test_animals_completed_by_any_tile_of_the_turn_count():
    """(1, 1) completes nothing; (1, 0), laid second, completes the starfish."""
    state = table({(0, 0): "OOO", (0, 1): "OOO"}, [["OOO", "OOO", "GGG"], ["GGG"]])
    events = GAME.apply(state, 0, place(("OOO", 1, 1), ("OOO", 1, 0)))
    assert [(e["q"], e["r"]) for e in completed(events)] == [(0, 0)]


def test_placed_tiles_must_come_from_the_hand():
    state = table({(0, 0): "OOO"}, [["OOO", "GGG", "BBB"], ["OOO"]])
    assert "not in your hand" in refused(state, place(("OOB", 1, 0)))
    assert "not in your hand" in refused(state, place(("OOO", 1, 0), ("OOO", 0, 1)))


def test_a_paved_hex_takes_no_other_tile():
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "BBB"], ["OOO"]])
    assert "already paved" in refused(state, place(("OOO", 0, 0)))
    assert "already paved" in refused(state, place(("OOO", 1, 0), ("OOO", 1, 0)))


@pytest.mark.parametrize(
    "action",
    [
        {"type": "place", "tiles": []},
        place(("OOO", 1, 0), ("OOO", 0, 1), ("OOO", -1, 1), ("OOO", 2, 0)),
        {"type": "place", "tiles": [{"tile": "XYZ", "q": 1, "r": 0}]},
        {"type": "place", "tiles": [{"tile": "OOO", "q": "1", "r": 0}]},
        {"type": "place", "tiles": [{"tile": "OOO", "q": True, "r": 0}]},
        {"type": "place", "tiles": ["OOO"]},
        {"type": "place"},
        {"type": "exchange", "tile": "OOO"},
        {"type": "exchange", "tile": "QQQ"},
        {"type": "pass"},
        {"type": "discard"},
    ],
)
def test_malformed_or_illegal_actions_leave_the_state_untouched(action):
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "OOO", "OOO"], ["GGG"]])
    assert assert_illegal_leaves_state(GAME, state, 0, action) == "illegal_action"


def test_only_the_active_player_acts():
    state = table({(0, 0): "OOO"}, [["OOO"] * 3, ["OOO"] * 3])
    assert assert_illegal_leaves_state(GAME, state, 1, place(("OOO", 1, 0))) == "not_your_turn"
    assert GAME.legal_actions(state, 1) == []


# -- Marking and scoring ------------------------------------------------------------


def _complete_orange_starfish(objective: dict, markers: int = 25, others: dict = NEUTRAL):
    state = table(
        {(0, 0): "OOO", (0, 1): "OOO"},
        [["OOO", "GGG", "GGG"], ["GGG"] * 3],
        objectives=[objective, others],
    )
    state["markers"][0] = markers
    events = GAME.apply(state, 0, place(("OOO", 1, 0)))
    return state, completed(events)


def test_an_animal_matching_the_animal_card_is_marked():
    state, [animal] = _complete_orange_starfish({"animal": "starfish", "colour": "blue"})
    assert animal["marker"] == 0
    assert state["markers"] == [24, 35]
    assert rules.points(state) == [1, 0]


def test_an_animal_matching_the_colour_card_is_marked():
    state, [animal] = _complete_orange_starfish({"animal": "snail", "colour": "orange"})
    assert animal["marker"] == 0
    assert rules.points(state) == [1, 0]


def test_an_animal_matching_both_cards_scores_two():
    state, [animal] = _complete_orange_starfish({"animal": "starfish", "colour": "orange"})
    assert animal["marker"] == 0
    assert rules.points(state) == [2, 0]


def test_an_animal_matching_no_card_is_not_marked():
    state, [animal] = _complete_orange_starfish({"animal": "snail", "colour": "green"})
    assert animal["marker"] is None
    assert state["markers"] == [25, 35]


def test_completing_another_players_objective_gives_them_nothing():
    state, [animal] = _complete_orange_starfish(
        NEUTRAL, others={"animal": "starfish", "colour": "orange"}
    )
    assert animal["marker"] is None
    assert rules.points(state) == [0, 0]
    assert state["markers"] == [25, 35]


def test_no_marker_once_the_markers_are_spent():
    state, [animal] = _complete_orange_starfish({"animal": "starfish", "colour": "orange"}, 0)
    assert animal["marker"] is None
    assert state["markers"][0] == 0


def test_short_of_markers_the_two_point_animal_is_marked_first():
    """Decision: the orange starfish (1 point) completes first, the orange jellyfish
    (2 points) second; one marker left goes to the jellyfish."""
    state = table(
        {(0, 0): "OOO", (-1, 0): "OOO"},
        [["OOO"] * 3, ["GGG"]],
        objectives=[{"animal": "jellyfish", "colour": "orange"}, NEUTRAL],
    )
    state["markers"][0] = 1
    events = GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 0, 1), ("OOO", -1, 1)))
    assert [(e["animal"], e["marker"]) for e in completed(events)] == [
        ("starfish", None),
        ("jellyfish", 0),
    ]
    assert rules.points(state) == [2, 0]


def test_rulebook_scoring_one_point_per_objective_two_for_both():
    """ "Chaque joueur compte un point pour chaque animal qui correspond à l'un de
    ses objectifs et qui est marqué par l'une de ses fiches et compte deux points
    pour chaque animal qui correspond à ses deux objectifs." A player holding
    snail and blue who marked a blue starfish, a green snail and a blue snail
    scores 1 + 1 + 2 = 4; the other, holding jellyfish and orange, marked an
    orange jellyfish: 2."""
    state = table({(0, 0): "OOO"}, [["GGG"], ["GGG"]])
    state["objectives"] = [
        {"animal": "snail", "colour": "blue"},
        {"animal": "jellyfish", "colour": "orange"},
    ]
    marked = [
        ("starfish", "blue", 0),
        ("snail", "green", 0),
        ("snail", "blue", 0),
        ("jellyfish", "orange", 1),
        ("jellyfish", "green", None),
    ]
    state["animals"] = [
        {"q": i, "r": 0, "animal": a, "colour": c, "marker": m}
        for i, (a, c, m) in enumerate(marked)
    ]
    assert rules.points(state) == [4, 2]


def test_most_points_wins_and_ties_are_shared():
    state = table({(0, 0): "OOO"}, [["GGG"], ["GGG"], ["GGG"]])
    state["objectives"] = [{"animal": "snail", "colour": "blue"}] * 3
    state["animals"] = [
        {"q": 0, "r": i, "animal": "snail", "colour": "blue", "marker": seat}
        for i, seat in enumerate([0, 2, 1])
    ]
    state["finished"], state["end_reason"], state["active"] = True, "blocked", None
    assert GAME.outcome(state)["winners"] == [0, 1, 2]
    state["animals"][1]["colour"] = "green"
    result = GAME.outcome(state)
    assert result["winners"] == [0, 1]
    assert result["scores"] == [2, 2, 1]
    assert result["marked"] == [1, 1, 1]


# -- Refill and turn order ---------------------------------------------------------------


def test_refill_draws_back_up_to_three_tiles():
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "GGG"], ["GGG"]], pile=["BBB", "OGB", "GOG"])
    events = GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 0, 1)))
    assert sorted(state["hands"][0]) == ["GGG", "GOG", "OGB"]
    assert state["pile"] == ["BBB"]
    assert {"type": "refill", "seat": 0, "count": 2} in events
    assert {"type": "drew", "seat": 0, "tiles": ["GOG", "OGB"], "to": [0]} in events


def test_refill_stops_when_the_pile_runs_out():
    state = table({(0, 0): "OOO"}, [["OOO", "OOO", "GGG"], ["OOO"]], pile=["BBB"])
    GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 0, 1)))
    assert sorted(state["hands"][0]) == ["BBB", "GGG"]
    assert state["pile"] == []
    assert not state["finished"]


def test_play_passes_clockwise():
    state = table({(0, 0): "OOO"}, [["OOO"] * 3] * 3, active=1)
    events = GAME.apply(state, 1, place(("OOO", 1, 0)))
    assert GAME.to_act(state) == [2]
    assert events[-1] == {"type": "turn", "seat": 2, "turn": 2}
    GAME.apply(state, 2, place(("OOO", 2, 0)))
    assert GAME.to_act(state) == [0]


# -- Nothing fits: exchange and pass ----------------------------------------------------------

UNFIT = ["GOO", "BBG", "GBO"]  # none fits next to a lone "OGB": see test below


def test_no_unfit_tile_fits_next_to_the_start_tile():
    state = table({(0, 0): "OGB"}, [UNFIT, ["GGG"]], pile=["OOO"])
    assert not rules._can_place(rules._board_map(state), UNFIT)
    assert rules._can_place(rules._board_map(state), ["OOO"])


def test_exchange_only_when_no_hand_tile_fits():
    state = table({(0, 0): "OGB"}, [["GOO", "BBG", "OOO"], ["GGG"]], pile=["OOO"])
    assert "can be placed" in refused(state, {"type": "exchange", "tile": "GOO"})
    assert all(a["type"] == "place" for a in GAME.legal_actions(state, 0))


def test_exchange_returns_a_tile_to_the_pile_and_draws_one():
    state = table({(0, 0): "OGB"}, [UNFIT, ["GGG"]], pile=["OOO"])
    assert GAME.legal_actions(state, 0) == [
        {"type": "exchange", "tile": tile} for tile in sorted(UNFIT)
    ]
    events = GAME.apply(state, 0, {"type": "exchange", "tile": "BBG"})
    assert len(state["hands"][0]) == 3 and len(state["pile"]) == 1
    assert Counter(state["hands"][0] + state["pile"]) == Counter([*UNFIT, "OOO"])
    assert "BBG" not in state["hands"][0] or state["pile"] == ["OOO"]
    assert GAME.to_act(state) == [0], "the player then tries again"
    public, private = events
    assert public == {"type": "exchange", "seat": 0}
    assert private["to"] == [0] and private["returned"] == "BBG"


def test_exchange_may_draw_back_the_returned_tile():
    """The returned tile is shuffled into the pile before the draw."""
    drawn = set()
    for seed in range(30):
        state = table({(0, 0): "OGB"}, [UNFIT, ["GGG"]], pile=["OOO"])
        state["rng"] = seed
        GAME.apply(state, 0, {"type": "exchange", "tile": "BBG"})
        drawn.add(state["hands"][0][-1])
    assert drawn == {"BBG", "OOO"}


def test_exchange_is_offered_only_when_a_pile_tile_fits():
    state = table({(0, 0): "OGB"}, [UNFIT, ["OOO"]], pile=["GOO", "BBG"])
    assert GAME.legal_actions(state, 0) == [{"type": "pass"}]
    assert "no tile of the pile" in refused(state, {"type": "exchange", "tile": "GOO"})


def test_pass_only_when_nothing_fits_nor_could_be_drawn():
    fits = table({(0, 0): "OGB"}, [["GOO", "BBG", "OOO"], ["OOO"]], pile=["GOO"])
    assert "place it" in refused(fits, {"type": "pass"})
    could_draw = table({(0, 0): "OGB"}, [UNFIT, ["OOO"]], pile=["OOO"])
    assert "exchange" in refused(could_draw, {"type": "pass"})
    state = table({(0, 0): "OGB"}, [UNFIT, ["OOO"]], pile=["GOO"])
    events = GAME.apply(state, 0, {"type": "pass"})
    assert events[0] == {"type": "pass", "seat": 0}
    assert GAME.to_act(state) == [1]
    assert state["hands"][0] == UNFIT


# -- End of the game ------------------------------------------------------------------------


def test_game_ends_when_a_player_has_no_tiles_and_the_pile_is_empty():
    state = table({(0, 0): "OOO"}, [["OOO"], ["GGG", "BBB"]], pile=[])
    events = GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert state["finished"] and state["end_reason"] == "hand_and_pile_empty"
    assert GAME.to_act(state) == []
    assert events[-1]["type"] == "match_over"
    assert GAME.outcome(state)["reason"] == "hand_and_pile_empty"


def test_game_goes_on_while_the_pile_refills_an_empty_hand():
    state = table({(0, 0): "OOO"}, [["OOO"], ["OOO"]], pile=["GGG"])
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert not state["finished"]
    assert state["hands"][0] == ["GGG"]


def test_game_ends_when_nobody_can_place_and_the_pile_holds_nothing_placeable():
    state = table({(0, 0): "OGB"}, [UNFIT, ["GOO"]], pile=["BBG"])
    assert GAME.outcome(state) is None
    events = GAME.apply(state, 0, {"type": "pass"})
    assert state["finished"] and state["end_reason"] == "blocked"
    assert events[-1]["type"] == "match_over" and events[-1]["reason"] == "blocked"
    assert GAME.outcome(state)["winners"] == [0, 1]


def test_game_ends_after_the_last_placeable_tile():
    state = table({(0, 0): "OGB"}, [["OOO", "GOO"], ["GOO"]], pile=["BBG"])
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert not state["finished"], "a tile now fits next to the orange-snailed (1, 0)"
    assert state["end_reason"] is None


def test_a_finished_game_takes_no_action():
    state = table({(0, 0): "OOO"}, [["OOO"], ["GGG"]], pile=[])
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    assert assert_illegal_leaves_state(GAME, state, 1, {"type": "pass"}) == "not_your_turn"
    assert GAME.legal_actions(state, 1) == []


# -- Beginner rules ---------------------------------------------------------------------------


def test_beginner_rules_drop_the_completion_condition():
    state = table({(0, 0): "OOO"}, [["OOO"] * 3, ["GGG"]], beginner=True)
    GAME.apply(state, 0, place(("OOO", 1, 0), ("OOO", 2, 0), ("OOO", 3, 0)))
    assert len(state["board"]) == 4


def test_beginner_tiles_must_still_touch_one_another():
    state = table({(0, 0): "OOO"}, [["OOO"] * 3, ["GGG"]], beginner=True)
    assert "touch one another" in refused(state, place(("OOO", 1, 0), ("OOO", -1, 0)))


def test_beginner_objectives_and_points_are_public():
    state = new_match(GAME, 3, 5, {"beginner": True})
    for viewer in [None, 0, 1, 2]:
        players = GAME.view(state, viewer)["players"]
        assert [p["objectives"] for p in players] == state["objectives"]
        assert [p["points"] for p in players] == [0, 0, 0]


# -- Views --------------------------------------------------------------------------------------


def test_a_seat_sees_its_own_hand_objectives_and_points_only():
    state = new_match(GAME, 3, 2)
    view = GAME.view(state, 1)
    assert view["hand"] == state["hands"][1]
    assert [p["objectives"] for p in view["players"]] == [None, state["objectives"][1], None]
    assert [p["points"] for p in view["players"]] == [None, 0, None]
    spectator = GAME.view(state, None)
    assert spectator["hand"] is None
    assert all(p["objectives"] is None and p["points"] is None for p in spectator["players"])
    assert spectator["pile_size"] == len(state["pile"])
    assert "pile" not in spectator and "hands" not in spectator


def test_everything_but_hands_and_pile_is_shown_at_the_end():
    state = table({(0, 0): "OOO"}, [["OOO"], ["GGG", "BBB"]], pile=[])
    GAME.apply(state, 0, place(("OOO", 1, 0)))
    spectator = GAME.view(state, None)
    assert [p["objectives"] for p in spectator["players"]] == state["objectives"]
    assert [p["points"] for p in spectator["players"]] == [0, 0]
    assert spectator["hand"] is None and spectator["finished"]


def test_view_matches_its_schema():
    state = new_match(GAME, 4, 1)
    for viewer in [None, 0, 1, 2, 3]:
        assert GAME.view_schema().validate(GAME.view(state, viewer)) == {}


# -- Legal actions --------------------------------------------------------------------------------


def test_identical_tiles_in_hand_give_one_action():
    state = table({(0, 0): "OOO"}, [["OOO"] * 3, ["GGG"]])
    singles = [a for a in GAME.legal_actions(state, 0) if len(a["tiles"]) == 1]
    assert len(singles) == 6


def test_legal_actions_of_a_lone_start_tile():
    """Next to "OGB", "OOO" fits where the starfish is orange: (1, 0) and (0, 1);
    two of them there complete the starfish."""
    state = table({(0, 0): "OGB"}, [["OOO", "OOO", "GOO"], ["GGG"]])
    placements = {
        tuple((t["tile"], t["q"], t["r"]) for t in a["tiles"])
        for a in GAME.legal_actions(state, 0)
    }
    assert placements == {
        (("OOO", 1, 0),),
        (("OOO", 0, 1),),
        (("OOO", 0, 1), ("OOO", 1, 0)),
    }


def _reference_placements(state: dict, seat: int) -> set[frozenset]:
    """Brute force: every connected group of 1-3 empty hexes touching the table,
    every assignment of hand tiles, every order, judged by apply's own check."""
    board = {(b["q"], b["r"]) for b in state["board"]}
    groups = {frozenset([h]) for h in frontier(board)}
    for _ in range(2):
        groups |= {
            g | {n}
            for g in groups
            for h in g
            for n in neighbours(h)
            if n not in board and n not in g
        }
    hand = state["hands"][seat]
    legal = set()
    for group in groups:
        assignments = {
            tuple(zip(sorted(group), tiles, strict=True))
            for tiles in itertools.permutations(hand, len(group))
        }
        for assignment in assignments:
            for order in itertools.permutations(assignment):
                tiles = [{"tile": t, "q": h[0], "r": h[1]} for h, t in order]
                try:
                    rules._checked_placement(state, seat, tiles)
                except IllegalAction:
                    continue
                legal.add(frozenset(assignment))
                break
    return legal


def _sample_states(count: int, beginner: bool) -> list[dict]:
    rng = random.Random(count + beginner)
    states = []
    for seed in range(count):
        state = new_match(GAME, 2 + seed % 5, seed, {"beginner": beginner})
        for _ in range(rng.randrange(1, 14)):
            actions = GAME.legal_actions(state, state["active"])
            GAME.apply(state, state["active"], rng.choice(actions))
            if state["finished"]:
                break
        if not state["finished"]:
            states.append(state)
    return states


@pytest.mark.parametrize("beginner", [False, True])
def test_legal_actions_are_exactly_the_placements_the_rules_allow(beginner):
    for state in _sample_states(4, beginner):
        seat = state["active"]
        actions = GAME.legal_actions(state, seat)
        listed = [
            frozenset(((t["q"], t["r"]), t["tile"]) for t in a["tiles"])
            for a in actions
            if a["type"] == "place"
        ]
        assert len(listed) == len(set(listed)), "each placement is listed once"
        assert set(listed) == _reference_placements(state, seat)
        for action in actions:
            GAME.apply(copy.deepcopy(state), seat, action)
