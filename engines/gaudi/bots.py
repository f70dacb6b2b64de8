"""The Gaudí tile game's own bot knowledge: an evaluation, a greedy policy, search hooks.

A position is judged by each seat's points and by its *prospects*. Every
empty hex next to the table where one more tile would complete animals (an
*open* site: two of its three hexes paved, so its colour is fixed) is worth
what those animals would score for whoever fills it, times the chance that
a hand of three holds a tile fitting the hex (each colour the hex's
neighbours impose divides that by about three). The seat to move next takes
the best of them, the others get what is left: each seat's prospects are
summed best first with decreasing weights (``RANK_WEIGHTS``) and count for
``MOVER_WEIGHT`` for the seat to move, ``WAITING_WEIGHT`` for the others. A
site with one hex paved is a small, longer prospect. A seat's value is its
points plus prospects, against the best opponent's.

Only public information and the seat's own objective are read: another
seat's objective counts as the average of those still consistent with the
markers on the table (``rules.objective_candidates``), so values are the
same in every world the seat cannot tell apart.

The greedy policy values a placement on the board directly, without
applying it: the board plus its tiles, the animals it completes (marked as
the rules would) and the prospects of the result, the next seat to move.
The search (``engines.ai.mcts``) considers the best few placements by that
value, plays the turns that follow by the greedy policy, and values the
position ``HORIZON_TURNS`` turns later; once the pile runs low it plays on
to the end of the game, whose outcome decides.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

import orjson

from engines.core import Action, Seat, State
from engines.gaudi.geometry import neighbours, site_hexes, sites_of
from engines.gaudi.rules import (
    ANIMALS,
    COLOURS,
    MAX_TILES_PER_TURN,
    legal_actions,
    objective_candidates,
    outcome,
)

Hex = tuple[int, int]
Board = dict[Hex, str]
Weights = list[list[list[float]]]  # per seat, [animal][colour]: points a completion is worth
Site = tuple[int, int]  # (animal, colour), as indices
# Per open hex, its value for each seat; the sites with one paved hex; and
# each seat's total over those sites.
Prospects = tuple[dict[Hex, list[float]], dict[Hex, Site], list[float]]

COLOUR_CODES = "OGB"  # a tile's letters, in the order of rules.COLOURS
HAND_SIZE = 3
MOVER_WEIGHT = 0.8  # share of its prospects the seat to move next is credited with
WAITING_WEIGHT = 0.4  # the same for the seats that move later
RANK_WEIGHTS = (1.0, 0.7, 0.45, 0.3, 0.2, 0.1)  # prospects, best first; then the last
HALF_SITE_WEIGHT = 0.08  # a site with one hex paved, per point it could score
MATCH_WEIGHT = 100.0  # a finished match won (or lost), on top of the point difference
SEARCH_PLACEMENTS = 6  # placements the search considers at most: the best by the evaluation,
SEARCH_MARGIN = 0.6  # within this of the best one (the others are not worth the time)
HORIZON_TURNS = 2  # playouts are valued this many turns after the searched one...
ENDGAME_PILE = 4  # ...unless the pile held at most this many tiles: then at the end
VALUE_SCALE = 3.0  # point difference worth about 73% of a win
MARGIN_SHARE = 0.1  # share of a final value given by the point difference


# -- evaluation ------------------------------------------------------------


def evaluate(state: State, seat: Seat) -> float:
    """``seat``'s points and prospects against the best opponent's.

    A finished game is worth ``MATCH_WEIGHT`` (won alone), 0 (shared) or
    minus it (lost), plus the point difference.
    """
    if state["finished"]:
        return _final_value(state, seat)
    weights = objective_weights(state, seat)
    prospects = prospects_of(_board(state), weights)
    return position_value(prospects, expected_points(state, weights), state["active"], seat)


def objective_weights(state: State, seat: Seat | None) -> Weights:
    """Per seat, the points completing an animal of each (animal, colour)
    gives it: exact for ``seat``, for the others the average over the
    objectives ``seat`` still thinks possible; exact for every seat when
    ``seat`` is None (a sampled world, read whole)."""
    weights = []
    for other in range(state["players"]):
        candidates = (
            [state["objectives"][other]]
            if seat is None or other == seat
            else objective_candidates(state, seat, other)
        )
        table = [[0.0] * 3 for _ in ANIMALS]
        for objective in candidates:
            a = ANIMALS.index(objective["animal"])
            c = COLOURS.index(objective["colour"])
            for i in range(3):
                table[a][i] += 1.0
                table[i][c] += 1.0
        weights.append([[value / len(candidates) for value in row] for row in table])
    return weights


def expected_points(state: State, weights: Weights) -> list[float]:
    """Each seat's points, its marked animals valued by ``weights``."""
    totals = [0.0] * state["players"]
    for animal in state["animals"]:
        owner = animal["marker"]
        if owner is not None:
            a = ANIMALS.index(animal["animal"])
            totals[owner] += weights[owner][a][COLOURS.index(animal["colour"])]
    return totals


def position_value(prospects: Prospects, points: list[float], mover: Seat, seat: Seat) -> float:
    """``seat``'s points plus prospects minus the best opponent's, ``mover``
    being the next seat to play."""
    totals = _totals(prospects, points, mover)
    return totals[seat] - max(t for s, t in enumerate(totals) if s != seat)


def prospects_of(board: Board, weights: Weights) -> Prospects:
    """The open hexes and the one-paved-hex sites of ``board``, valued by ``weights``."""
    hexes = {}
    for hex_ in {n for h in board for n in neighbours(h) if n not in board}:
        values = _hex_values(board, hex_, weights)
        if values is not None:
            hexes[hex_] = values
    halves: dict[Hex, Site] = {}
    totals = [0.0] * len(weights)
    for hex_ in board:
        for animal, anchor in enumerate(sites_of(hex_)):
            if anchor in halves:
                continue
            half = _half_site(board, anchor, animal)
            if half is not None:
                halves[anchor] = half
                for s, table in enumerate(weights):
                    totals[s] += table[half[0]][half[1]]
    return hexes, halves, totals


def prospects_after(
    board: Board, prospects: Prospects, placed: list[Hex], weights: Weights
) -> Prospects:
    """``prospects`` updated for the ``placed`` hexes, already on ``board``:
    only their neighbours and their sites change."""
    hexes, halves, totals = dict(prospects[0]), dict(prospects[1]), list(prospects[2])
    for hex_ in placed:
        hexes.pop(hex_, None)
    for hex_ in {n for h in placed for n in neighbours(h) if n not in board}:
        values = _hex_values(board, hex_, weights)
        if values is None:
            hexes.pop(hex_, None)
        else:
            hexes[hex_] = values
    for hex_ in placed:
        for animal, anchor in enumerate(sites_of(hex_)):
            old = halves.pop(anchor, None)
            new = _half_site(board, anchor, animal)
            if new is not None:
                halves[anchor] = new
            for s, table in enumerate(weights):
                if old is not None:
                    totals[s] -= table[old[0]][old[1]]
                if new is not None:
                    totals[s] += table[new[0]][new[1]]
    return hexes, halves, totals


def prospect_values(prospects: Prospects) -> list[float]:
    """Each seat's prospects: its open hexes best first, weighted by
    ``RANK_WEIGHTS``, and its one-paved-hex sites."""
    hexes, _, totals = prospects
    values = []
    for s, total in enumerate(totals):
        found = sorted((v[s] for v in hexes.values() if v[s]), reverse=True)
        ranked = sum(value * weight for value, weight in zip(found, RANK_WEIGHTS, strict=False))
        ranked += RANK_WEIGHTS[-1] * sum(found[len(RANK_WEIGHTS) :])
        values.append(ranked + HALF_SITE_WEIGHT * total)
    return values


# -- policies --------------------------------------------------------------


def greedy(state: State, seat: Seat, rng: random.Random) -> Action:
    """One ply: the placement whose result evaluates best (ties at random);
    when nothing fits, the exchange of the tile furthest from fitting."""
    actions = legal_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    if actions[0]["type"] != "place":
        return _exchange(state, actions)
    return ranked_placements(state, seat, actions, rng)[0][1]


def ranked_placements(
    state: State, seat: Seat, actions: list[Action], rng: random.Random
) -> list[tuple[float, Action]]:
    """The placements among ``actions`` with their value for ``seat`` (to
    act), best first, ties in random order."""
    weights = objective_weights(state, seat)
    points = expected_points(state, weights)
    board = _board(state)
    prospects = prospects_of(board, weights)
    mover = (seat + 1) % state["players"]
    markers = state["markers"][seat]
    scored = []
    for action in actions:
        tiles = [(t["q"], t["r"]) for t in action["tiles"]]
        for placed, hex_ in zip(action["tiles"], tiles, strict=True):
            board[hex_] = placed["tile"]
        after = list(points)
        after[seat] += _gained(board, tiles, weights[seat], markers)
        value = position_value(
            prospects_after(board, prospects, tiles, weights), after, mover, seat
        )
        for hex_ in tiles:
            del board[hex_]
        scored.append((value, rng.random(), action))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(value, action) for value, _, action in scored]


# -- search hooks ------------------------------------------------------------


def search_actions(state: State, seat: Seat) -> list[Action]:
    """What the search considers: the ``SEARCH_PLACEMENTS`` best placements
    (ties in a fixed order); every action when nothing fits."""
    found = _best_placements(_search_key(state, seat))
    if found is None:
        return legal_actions(state, seat)
    return orjson.loads(found)


def rollout_action(state: State, seat: Seat, rng: random.Random) -> Action:
    """Playouts: the best placement by the evaluation (``search_actions``'
    first); when nothing fits, a random exchange, or the pass."""
    found = _best_placements(_search_key(state, seat))
    if found is None:
        return rng.choice(legal_actions(state, seat))
    return orjson.loads(found)[0]


def playout_value(start: State, state: State) -> list[float] | None:
    """Stop a playout ``HORIZON_TURNS`` turns after ``start`` (while the
    pile is not low) and turn the evaluation into values in [0, 1], reading
    the sampled world whole (every objective); at the end of the game, the
    outcome (a share of 1 among the winners) plus a little for the point
    difference."""
    if state["finished"]:
        return _final_values(state)
    if len(start["pile"]) <= ENDGAME_PILE or state["turn"] < start["turn"] + HORIZON_TURNS:
        return None
    weights = objective_weights(state, None)
    prospects = prospects_of(_board(state), weights)
    totals = _totals(prospects, expected_points(state, weights), state["active"])
    return [
        _logistic(total - max(t for s, t in enumerate(totals) if s != seat))
        for seat, total in enumerate(totals)
    ]


# -- private helpers -------------------------------------------------------


def _totals(prospects: Prospects, points: list[float], mover: Seat) -> list[float]:
    """Each seat's points plus its share of its prospects."""
    values = prospect_values(prospects)
    return [
        points[s] + (MOVER_WEIGHT if s == mover else WAITING_WEIGHT) * values[s]
        for s in range(len(points))
    ]


def _fit_chance(constrained: int) -> float:
    """The chance that a hand of three holds a tile fitting ``constrained`` imposed colours."""
    return 1.0 - (1.0 - 3.0**-constrained) ** HAND_SIZE


FIT_CHANCE = tuple(_fit_chance(k) for k in range(4))


def _site_partners(parity: int) -> tuple[tuple[int, Hex, Hex], ...]:
    """Per animal of a hex with ``(q - r) % 3 == parity``: the offsets of the
    two other hexes of its site."""
    hex_ = (parity, 0)
    partners = []
    for animal, anchor in enumerate(sites_of(hex_)):
        a, b = (h for h in site_hexes(anchor) if h != hex_)
        partners.append((animal, (a[0] - parity, a[1]), (b[0] - parity, b[1])))
    return tuple(partners)


PARTNERS = tuple(_site_partners(parity) for parity in range(3))


def _board(state: State) -> Board:
    return {(placed["q"], placed["r"]): placed["tile"] for placed in state["board"]}


def _hex_values(board: Board, hex_: Hex, weights: Weights) -> list[float] | None:
    """For the empty ``hex_``: what a tile there would complete, worth to
    each seat, times the chance a hand fits it; None if it completes nothing."""
    q, r = hex_
    constrained = 0
    completed = []
    for animal, (aq, ar), (bq, br) in PARTNERS[(q - r) % 3]:
        first = board.get((q + aq, r + ar))
        second = board.get((q + bq, r + br))
        if first is not None:
            constrained += 1
            if second is not None:
                completed.append((animal, COLOUR_CODES.index(first[animal])))
        elif second is not None:
            constrained += 1
    if not completed:
        return None
    chance = FIT_CHANCE[constrained]
    return [chance * sum(table[a][c] for a, c in completed) for table in weights]


def _half_site(board: Board, anchor: Hex, animal: int) -> Site | None:
    """The (animal, colour) of the site at ``anchor`` if exactly one of its
    hexes is paved."""
    paved = [board[h] for h in site_hexes(anchor) if h in board]
    if len(paved) != 1:
        return None
    return animal, COLOUR_CODES.index(paved[0][animal])


def _gained(board: Board, tiles: list[Hex], table: list[list[float]], markers: int) -> float:
    """What the animals completed by ``tiles`` (already on ``board``) score
    for the seat laying them, while its markers last, best first."""
    worths = []
    done: set[Hex] = set()
    for hex_ in tiles:
        for animal, anchor in enumerate(sites_of(hex_)):
            if anchor in done or not all(h in board for h in site_hexes(anchor)):
                continue
            done.add(anchor)
            value = table[animal][COLOUR_CODES.index(board[anchor][animal])]
            if value:
                worths.append(value)
    worths.sort(reverse=True)
    return sum(worths[:markers])


def _search_key(state: State, seat: Seat) -> bytes:
    """What ``search_actions`` depends on, as JSON: the public state, the
    seat's hand and the objectives it knows."""
    public = state["beginner"] or state["finished"]
    return orjson.dumps(
        {
            "players": state["players"],
            "board": state["board"],
            "animals": state["animals"],
            "markers": state["markers"],
            "beginner": state["beginner"],
            "finished": state["finished"],
            "active": state["active"],
            "seat": seat,
            "hands": [state["hands"][s] if s == seat else [] for s in range(state["players"])],
            "objectives": [
                o if public or s == seat else None for s, o in enumerate(state["objectives"])
            ],
            "pile": [],
            "pile_size": len(state["pile"]),
        }
    )


@lru_cache(maxsize=1024)
def _best_placements(key: bytes) -> bytes | None:
    """``search_actions`` for the state ``_search_key`` describes, as JSON;
    None when the seat cannot place. Cached: the searching seat's options
    are the same in every world it samples."""
    state = orjson.loads(key)
    seat = state["seat"]
    actions = legal_actions(state, seat)
    if not actions or actions[0]["type"] != "place":
        return None
    ranked = ranked_placements(state, seat, actions, random.Random(0))
    best = ranked[0][0]
    chosen = [
        action for value, action in ranked[:SEARCH_PLACEMENTS] if value >= best - SEARCH_MARGIN
    ]
    if state["pile_size"] <= ENDGAME_PILE:
        # Near the end, how many tiles are left in hand decides when the game
        # ends: the best placement of each size is worth a look.
        for size in range(1, MAX_TILES_PER_TURN + 1):
            sized = next((a for _, a in ranked if len(a["tiles"]) == size), None)
            if sized is not None and sized not in chosen:
                chosen.append(sized)
    return orjson.dumps(chosen)


def _exchange(state: State, actions: list[Action]) -> Action:
    """The exchange of the tile whose best hex next to the table still
    leaves the most imposed colours unmatched."""
    board = _board(state)
    needs = []
    for hex_ in {n for h in board for n in neighbours(h) if n not in board}:
        need: list[str | None] = [None, None, None]
        for animal, anchor in enumerate(sites_of(hex_)):
            for other in site_hexes(anchor):
                if other in board and other != hex_:
                    need[animal] = board[other][animal]
        needs.append(need)

    def misses(tile: str) -> int:
        return min(
            sum(1 for a in range(3) if need[a] is not None and need[a] != tile[a])
            for need in needs
        )

    return max(actions, key=lambda action: (misses(action["tile"]), action["tile"]))


def _final_value(state: State, seat: Seat) -> float:
    result = outcome(state)
    assert result is not None
    scores = result["scores"]
    margin = scores[seat] - max(p for s, p in enumerate(scores) if s != seat)
    if result["winners"] == [seat]:
        return MATCH_WEIGHT + margin
    if seat in result["winners"]:
        return margin
    return -MATCH_WEIGHT + margin


def _final_values(state: State) -> list[float]:
    result = outcome(state)
    assert result is not None
    scores, winners = result["scores"], result["winners"]
    values = []
    for seat, score in enumerate(scores):
        margin = score - max(p for s, p in enumerate(scores) if s != seat)
        share = 1.0 / len(winners) if seat in winners else 0.0
        values.append((1 - MARGIN_SHARE) * share + MARGIN_SHARE * _logistic(margin))
    return values


def _logistic(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value / VALUE_SCALE))
