"""Dékal's own bot knowledge: an evaluation, a greedy policy, search hooks.

The evaluation estimates each grid's final score from what is face up: a
face-up card already next to an equal one counts 0 (it cancels), a lone one
counts its value, less the chance that a card still to come lands next to
it and cancels it; every cell still to be filled (face down or a hole) will
receive a card from the centre and counts a fixed expected cost. A seat's
value is the best opponent's estimate minus its own (scores are lower is
better), plus the manches already scored.

All the work is on a flat copy of one grid, ``known``: 16 cells in reading
order, each a face-up value, 0 for a face-down card or None for the hole.
A take changes only the taker's grid and the centre, so trying a take on
``known`` is trying it on a copy of the state.
"""

from __future__ import annotations

import math
import random

from engines.core import Action, Seat, State
from engines.dekal.rules import DIRECTIONS, SIZE, determinize, outcome

# Expected final cost of a cell still to be filled: the taker picks from the
# centre, so below the mean card (5.5).
UNKNOWN_COST = 4.0
# Chance that one open neighbour (face down or a hole) ends up holding the
# same value as a lone face-up card, cancelling it.
PAIR_CHANCE = 0.12
# Samples of the centre per reveal position in ``greedy``.
REVEAL_SAMPLES = 4
# Playouts stop this many turns after the searched one, then are valued.
HORIZON_TURNS = 2
# Score difference worth about 73% of a win (the logistic's unit).
VALUE_SCALE = 6.0

CELLS = SIZE * SIZE
NEIGHBOURS = [
    [
        r2 * SIZE + c2
        for r2, c2 in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
        if 0 <= r2 < SIZE and 0 <= c2 < SIZE
    ]
    for r in range(SIZE)
    for c in range(SIZE)
]
KEEP = [(1 - PAIR_CHANCE) ** k for k in range(5)]


def _line(hole: int, direction: str) -> list[int]:
    row, col = divmod(hole, SIZE)
    if direction == "left":
        return [row * SIZE + c for c in range(col + 1)]
    if direction == "right":
        return [row * SIZE + c for c in range(SIZE - 1, col - 1, -1)]
    if direction == "top":
        return [r * SIZE + col for r in range(row + 1)]
    return [r * SIZE + col for r in range(SIZE - 1, row - 1, -1)]


# LINES[hole][direction]: the cells from the entry edge to the hole.
LINES = [{d: _line(hole, d) for d in DIRECTIONS} for hole in range(CELLS)]


# -- evaluation ------------------------------------------------------------


def evaluate(state: State, seat: Seat) -> float:
    """The best opponent's estimated total minus ``seat``'s (larger is better).

    Only face-up cards are read, so the value is the same in every world the
    seat cannot tell apart. A finished match is valued by its outcome: a
    sole win is worth 100 more than the score difference.
    """
    estimates = estimated_totals(state)
    mine = estimates[seat]
    best_other = min(e for s, e in enumerate(estimates) if s != seat)
    value = best_other - mine
    if state["phase"] == "over":
        winners = outcome(state)["winners"]
        if winners == [seat]:
            value += 100.0
        elif seat not in winners:
            value -= 100.0
    return value


def estimated_totals(state: State) -> list[float]:
    """Each seat's total so far plus its current grid's estimated score."""
    if state["phase"] == "over":
        return [float(total) for total in state["totals"]]
    return [state["totals"][s] + estimate(known_grid(state, s)) for s in range(state["n_players"])]


def estimate(known: list[int | None]) -> float:
    """The expected final score of one grid (see the module docstring)."""
    cost = 0.0
    for cell in range(CELLS):
        value = known[cell]
        if not value:
            cost += UNKNOWN_COST
            continue
        open_sides = 0
        for other in NEIGHBOURS[cell]:
            neighbour = known[other]
            if neighbour == value:
                break
            if not neighbour:
                open_sides += 1
        else:
            cost += value * KEEP[open_sides]
    return cost


def known_grid(state: State, seat: Seat) -> list[int | None]:
    """``seat``'s grid as ``seat`` knows it: face-up values, 0 face down, None the hole."""
    grid, face_up = state["grids"][seat], state["face_up"][seat]
    return [
        (grid[r][c] if face_up[r][c] else 0) if grid[r][c] is not None else None
        for r in range(SIZE)
        for c in range(SIZE)
    ]


def pushed(known: list[int | None], hole: int, direction: str, value: int) -> list[int | None]:
    """The grid after pushing ``value`` in from ``direction`` to close ``hole``."""
    after = list(known)
    line = LINES[hole][direction]
    for i in range(len(line) - 1, 0, -1):
        after[line[i]] = after[line[i - 1]]
    after[line[0]] = value
    return after


# -- policies --------------------------------------------------------------


def greedy(state: State, seat: Seat, rng: random.Random) -> Action:
    """One ply. A take: the (value, side) whose grid estimates lowest. A
    reveal: the position whose hole promises the best take, averaged over
    centres sampled from determinized worlds (the seat's own card at that
    position, the others' at their choices); when the seat takes first it
    gets the best card of the centre, else one of them at random."""
    if state["phase"] == "draft":
        return best_take(state, seat, rng)
    known = known_grid(state, seat)
    first = state["first_player"] == seat
    worlds = [determinize(state, seat, rng) for _ in range(REVEAL_SAMPLES)]
    others = [_others_cards(world, seat, rng) for world in worlds]
    scored = []
    for position in _face_down(known):
        row, col = divmod(position, SIZE)
        total = sum(
            _reveal_value(known, position, [world["grids"][seat][row][col], *cards], first)
            for world, cards in zip(worlds, others, strict=True)
        )
        scored.append((total, rng.random(), position))
    _, _, position = max(scored)
    row, col = divmod(position, SIZE)
    return {"type": "reveal", "row": row, "col": col}


def best_take(state: State, seat: Seat, rng: random.Random) -> Action:
    """The take whose grid estimates lowest (ties at random)."""
    known = known_grid(state, seat)
    hole = _hole_index(state, seat)
    options = [
        (-estimate(pushed(known, hole, d, value)), rng.random(), value, d)
        for value in set(state["centre"])
        for d in _directions(hole)
    ]
    _, _, value, direction = max(options)
    return {"type": "take", "value": value, "from": direction}


def rollout_action(state: State, seat: Seat, rng: random.Random) -> Action:
    """Playouts: a random reveal, the best take by the estimate."""
    if state["phase"] == "draft":
        return best_take(state, seat, rng)
    known = known_grid(state, seat)
    row, col = divmod(rng.choice(_face_down(known)), SIZE)
    return {"type": "reveal", "row": row, "col": col}


def playout_value(start: State, state: State) -> list[float] | None:
    """Stop a playout ``HORIZON_TURNS`` turns after ``start`` (or at a new
    manche, or at the end) and turn ``evaluate`` into values in [0, 1]."""
    over = state["phase"] == "over"
    later = state["manche"] > start["manche"] or (
        state["turn"] >= start["turn"] + HORIZON_TURNS and state["phase"] == "reveal"
    )
    if not (over or later):
        return None
    return [
        1.0 / (1.0 + math.exp(-evaluate(state, s) / VALUE_SCALE))
        for s in range(state["n_players"])
    ]


# -- private helpers -------------------------------------------------------


def _face_down(known: list[int | None]) -> list[int]:
    return [cell for cell in range(CELLS) if known[cell] == 0]


def _hole_index(state: State, seat: Seat) -> int:
    hole = state["holes"][seat]
    return hole["row"] * SIZE + hole["col"]


def _directions(hole: int) -> list[str]:
    row, col = divmod(hole, SIZE)
    allowed = {"left": col > 0, "right": col < SIZE - 1, "top": row > 0, "bottom": row < SIZE - 1}
    return [d for d in DIRECTIONS if allowed[d]]


def _others_cards(world: State, seat: Seat, rng: random.Random) -> list[int]:
    """The cards the other seats reveal in ``world``: at their (sampled)
    choices, or at random face-down positions if they have not chosen."""
    cards = []
    for s, grid in enumerate(world["grids"]):
        if s == seat:
            continue
        choice = world["choices"][s]
        if choice is None:
            row, col = divmod(rng.choice(_face_down(known_grid(world, s))), SIZE)
        else:
            row, col = choice["row"], choice["col"]
        cards.append(grid[row][col])
    return cards


def _reveal_value(known: list[int | None], position: int, centre: list[int], first: bool) -> float:
    """Minus the estimate after the best take through a hole at ``position``."""
    holed = list(known)
    holed[position] = None
    best = {
        value: max(-estimate(pushed(holed, position, d, value)) for d in _directions(position))
        for value in set(centre)
    }
    if first:
        return max(best.values())
    return sum(best[value] for value in centre) / len(centre)
