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

The children's game (option ``children``) has no objectives, markers nor
winner: every seat values the shared pavement alike (``children_value``,
the completed animals per tile), the greedy policy lays the tile that
completes the most animals, then the one with the most neighbours, and lays
on while a tile fits; the search weighs the best few such tiles, its
playouts valued by the pavement as it is.

Only public information and the seat's own objective are read: another
seat's objective counts as the average of those still consistent with the
markers on the table (``rules.objective_candidates``), so values are the
same in every world the seat cannot tell apart.

The greedy policy values a placement on the board directly, without
applying it: the board plus its tiles, the animals it completes (marked as
the rules would) and the prospects of the result, the next seat to move.
The search (``engines.ai.mcts``) plays greedy's choice until the pile runs
low (``LATE_PILE``); then it weighs the best few placements by that value
at its root, and plays every sampled world on to the end of the game
with a fast simulation of the rules on light data (``Pavement``,
``simulate``): each seat lays the tile whose hex scores best for it (the
animals completed, for itself and as denied to the next seat; the sites
left one hex short, a chance for itself and a risk from the next seat),
counting what a second tile of its hand would then complete, and adds
tiles while they complete animals worth it. The outcome decides: half
for the win, half for the margin (less noisy than the win alone). Below
the root the tree follows that same fast policy, one placement per seat
and turn.
"""

from __future__ import annotations

import math
import random
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import NamedTuple

import orjson

from engines.core import Action, Seat, State
from engines.gaudi.geometry import frontier, is_completed, neighbours, site_hexes, sites_of
from engines.gaudi.rules import (
    ANIMALS,
    COLOURS,
    MAX_TILES_PER_TURN,
    TILE_KINDS,
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
LATE_PILE = 24  # the search weighs alternatives once the pile holds at most this many tiles:
SEARCH_PLACEMENTS = 6  # at most this many placements, the best by the evaluation,
SEARCH_MARGIN = 1.0  # within this of the best one
ENDGAME_PILE = 3  # and, when the pile holds at most this many, the best of each size
VALUE_SCALE = 3.0  # point difference worth about 73% of a win
MARGIN_SHARE = 0.5  # share of a final value given by the point difference


# -- evaluation ------------------------------------------------------------


def evaluate(state: State, seat: Seat) -> float:
    """``seat``'s points and prospects against the best opponent's.

    A finished game is worth ``MATCH_WEIGHT`` (won alone), 0 (shared) or
    minus it (lost), plus the point difference.
    """
    if state.get("children"):
        return children_value(state)
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
    if state.get("children"):
        return children_placements(state, actions, rng)[0]
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
    """What the search considers. At the root (the seat and turn whose
    sample this is, ``observer``, see ``rules.determinize``): the best
    placements by the evaluation; elsewhere in the tree, the fast policy's
    placement alone (``play_turn``). Every action when nothing fits."""
    if state.get("children"):
        actions = legal_actions(state, seat)
        if actions[0]["type"] != "place":
            return actions
        return children_placements(state, actions, None)[:CHILDREN_SEARCH_PLACEMENTS]
    observer = state.get("observer")
    if observer is not None and observer != {"seat": seat, "turn": state["turn"]}:
        return [rollout_action(state, seat, random.Random(state["rng"]))]
    found = _best_placements(_search_key(state, seat))
    if found is None:
        return legal_actions(state, seat)
    return orjson.loads(found)


def rollout_action(state: State, seat: Seat, rng: random.Random) -> Action:
    """The fast policy's placement (``play_turn``); when nothing fits, a
    random exchange, or the pass. The children's game: ``greedy``'s choice."""
    if state.get("children"):
        return greedy(state, seat, rng)
    table = pavement(state)
    if not _fitting(table, table.hands[seat]):
        return rng.choice(legal_actions(state, seat))
    laid, _ = lay_tiles(table, seat, rng)
    return {"type": "place", "tiles": [{"tile": kind, "q": q, "r": r} for (q, r), kind in laid]}


def playout_value(start: State, state: State) -> list[float] | None:
    """At the end of the game: the outcome (a share of 1 among the winners)
    and the point difference, half each (``MARGIN_SHARE``); None before."""
    result = outcome(state)
    if result is not None and state.get("children"):
        return [children_value(state)] * state["players"]
    return None if result is None else _final_values(result["scores"])


def playout(start: State, state: State, rng: random.Random) -> list[float]:
    """Play the rest of the game fast (``simulate``) and value its result
    as ``playout_value`` does. Before the pile is low the root offers the
    best placement alone, so no playout could change the choice: skipped.
    The children's game is not played out: the pavement so far is its value."""
    if state.get("children"):
        return [children_value(state)] * state["players"]
    if len(start["pile"]) > LATE_PILE:
        return [0.5] * state["players"]
    table = pavement(state)
    simulate(table, rng)
    return _final_values(table.points)


# -- the children's game ------------------------------------------------------
# No objectives, no markers, no winner: the table builds one pavement, and a
# child is pleased by the animals it completes. Every seat has the same value.

CHILDREN_SEARCH_PLACEMENTS = 4  # the search weighs the best few tiles


def children_value(state: State) -> float:
    """What the table built, in [0, 1]: the completed animals per tile on the
    table (a pavement holds at most about one animal site per tile)."""
    return min(1.0, len(state["animals"]) / len(state["board"]))


def children_placements(
    state: State, actions: list[Action], rng: random.Random | None
) -> list[Action]:
    """The one-tile placements among ``actions``, best first: the animals the
    tile completes, then the tiles around its hex (a compact pavement leaves
    more animals to complete); ties at random, or in listing order without
    ``rng``. A child lays tiles while one fits: ``end_turn`` is never chosen
    while a placement is listed."""
    board = _board(state)
    scored = []
    for index, action in enumerate(actions):
        if action["type"] != "place":
            continue
        (placed,) = action["tiles"]
        hex_ = (placed["q"], placed["r"])
        board[hex_] = placed["tile"]
        completes = sum(is_completed(anchor, board) for anchor in sites_of(hex_))
        del board[hex_]
        around = sum(n in board for n in neighbours(hex_))
        tie = rng.random() if rng is not None else index
        scored.append((-completes, -around, tie, action))
    scored.sort(key=lambda item: item[:3])
    return [action for *_, action in scored]


# -- fast playouts -----------------------------------------------------------

COLOUR_INDEX = {code: i for i, code in enumerate(COLOUR_CODES)}
# The fast policy of playouts values a hex by the animals a tile there completes, plus:
DENY_WEIGHT = 0.5  # this share of their worth to the next seat (denied to it);
EXPOSE_WEIGHT = 0.3  # minus this share of the next seat's worth of a site left one hex short,
KEEP_WEIGHT = 0.2  # plus this share of that site's worth to the seat itself

Need = tuple[str | None, str | None, str | None]  # per animal, the colour imposed (None: free)


class Opening(NamedTuple):
    """An empty hex next to the table, as the fast policy sees it."""

    fitting: frozenset[str]  # the kinds of tile that fit there
    completes: tuple[int, ...]  # the animals a tile there completes
    scores: tuple[float, ...]  # what a tile there is worth to each seat (``_hex_score``)
    need: Need
    # The sites left one hex short by a tile there: (animal, colour code, the empty hex).
    short: tuple[tuple[int, str, Hex], ...]


@dataclass
class Pavement:
    """A sampled world reduced to what a fast playout needs: the board, its
    empty neighbours (``openings``), the hands, the pile, every seat's
    exact objective weights, markers left and points."""

    board: Board
    openings: dict[Hex, Opening]
    hands: list[list[str]]
    pile: list[str]
    weights: Weights
    markers: list[int]
    points: list[float]
    active: Seat
    finished: bool = False


def pavement(state: State) -> Pavement:
    """The light copy of a sampled world (read whole: every hand and objective)."""
    board = _board(state)
    weights = objective_weights(state, None)
    return Pavement(
        board=board,
        openings={hex_: _opening(board, hex_, weights) for hex_ in frontier(board)},
        hands=[list(hand) for hand in state["hands"]],
        pile=list(state["pile"]),
        weights=weights,
        markers=list(state["markers"]),
        points=expected_points(state, weights),
        active=state["active"],
        finished=state["finished"],
    )


def simulate(table: Pavement, rng: random.Random) -> None:
    """Play on to the end of the game by the rules, without the engine's
    checks and events, each turn by the fast policy of ``play_turn``."""
    while not table.finished:
        play_turn(table, rng)


def play_turn(table: Pavement, rng: random.Random) -> list[tuple[Hex, str]]:
    """One turn of the seat to act, by the rules ("il faut obligatoirement
    placer une dalle"; else exchange while the pile holds a tile that fits;
    else pass), then the refill and the end checks. Returns the tiles laid."""
    seat = table.active
    hand = table.hands[seat]
    if not _fitting(table, hand):
        if not _fitting(table, table.pile):
            _end_turn(table)
            return []
        while not _fitting(table, hand):
            _exchange_at_random(table, hand, rng)
    laid, completed = lay_tiles(table, seat, rng)
    _mark_completed(table, seat, completed)
    while len(hand) < HAND_SIZE and table.pile:
        hand.append(table.pile.pop())
    _end_turn(table)
    return laid


def lay_tiles(
    table: Pavement, seat: Seat, rng: random.Random
) -> tuple[list[tuple[Hex, str]], list[Site]]:
    """The fast policy's placement, laid (some tile of the hand must fit):
    the best hex by ``_hex_score`` for a tile of the hand, then up to two
    more touching the turn's tiles while each completes an animal and is
    worth it. The rules hold: two tiles complete an animal, three complete
    two, and three are never mutually adjacent. Returns the tiles laid and
    the animals completed."""
    hand = table.hands[seat]
    laid: list[tuple[Hex, str]] = []
    completed: list[Site] = []
    while len(laid) < MAX_TILES_PER_TURN and hand:
        kinds = set(hand)
        best, best_kinds = None, kinds
        best_score = -math.inf if not laid else 0.0
        ties = 0
        for hex_ in _next_hexes(table, laid):
            opening = table.openings[hex_]
            if opening.fitting.isdisjoint(kinds):
                continue
            if laid and len(completed) + len(opening.completes) < len(laid):
                continue
            score = opening.scores[seat]
            choice = kinds & opening.fitting
            if not laid:
                score, choice = _with_follow_up(table, seat, opening, hand, choice, score)
            if score > best_score:
                best, best_kinds, best_score, ties = hex_, choice, score, 1
            elif score == best_score and best is not None:
                ties += 1
                if rng.randrange(ties) == 0:
                    best, best_kinds = hex_, choice
        if best is None:
            break
        kind = rng.choice(sorted(best_kinds))
        completed += _lay(table, best, kind)
        hand.remove(kind)
        laid.append((best, kind))
    return laid, completed


def _with_follow_up(
    table: Pavement, seat: Seat, opening: Opening, hand: list[str], kinds: set[str], score: float
) -> tuple[float, set[str]]:
    """A first tile's score with what a second tile could add, and the
    kinds worth laying first: a site the first leaves one hex short is
    completed by a tile of the rest of the hand fitting the empty hex."""
    if not opening.short:
        return score, kinds
    best, chosen = score, kinds
    whole = set(hand)
    for kind in kinds:
        rest = whole if hand.count(kind) > 1 else whole - {kind}
        value = score + _follow_up(table, seat, opening, rest)
        if value > best:
            best, chosen = value, {kind}
    return best, chosen


def _follow_up(table: Pavement, seat: Seat, opening: Opening, kinds: set[str]) -> float:
    """The best a tile of ``kinds`` could add by completing a site that a
    tile on ``opening`` leaves one hex short (0 if none can): the empty
    hex's score, with the site completed rather than left short on both."""
    mine = table.weights[seat]
    theirs = table.weights[(seat + 1) % len(table.weights)]
    best = 0.0
    for animal, colour, empty in opening.short:
        second = table.openings.get(empty)
        if second is None:
            continue
        need = list(second.need)
        need[animal] = colour
        if _kinds_fitting(need[0], need[1], need[2]).isdisjoint(kinds):
            continue
        m, t = mine[animal][COLOUR_INDEX[colour]], theirs[animal][COLOUR_INDEX[colour]]
        short = KEEP_WEIGHT * m - EXPOSE_WEIGHT * t
        best = max(best, second.scores[seat] + m + DENY_WEIGHT * t - 2 * short)
    return best


def _next_hexes(table: Pavement, laid: list[tuple[Hex, str]]) -> Iterable[Hex]:
    """Where the next tile of the turn may go: anywhere next to the table
    first, then touching the turn's tiles but never both of two."""
    if not laid:
        return table.openings
    hexes = [h for h, _ in laid]
    around = {n for h in hexes for n in neighbours(h) if n in table.openings}
    if len(hexes) == 2:
        around = {n for n in around if not all(n in neighbours(h) for h in hexes)}
    return sorted(around)


def _opening(board: Board, hex_: Hex, weights: Weights) -> Opening:
    """What the empty ``hex_`` offers (see ``Opening``)."""
    q, r = hex_
    need: list[str | None] = [None, None, None]
    sites = []
    short = []
    for animal, (aq, ar), (bq, br) in PARTNERS[(q - r) % 3]:
        first, second = (q + aq, r + ar), (q + bq, r + br)
        paved = [h for h in (first, second) if h in board]
        if not paved:
            continue
        colour = board[paved[0]][animal]
        need[animal] = colour
        sites.append((animal, COLOUR_INDEX[colour], len(paved)))
        if len(paved) == 1:
            short.append((animal, colour, second if paved[0] == first else first))
    n = len(weights)
    return Opening(
        fitting=_kinds_fitting(need[0], need[1], need[2]),
        completes=tuple(animal for animal, _, count in sites if count == 2),
        scores=tuple(_hex_score(sites, weights[s], weights[(s + 1) % n]) for s in range(n)),
        need=(need[0], need[1], need[2]),
        short=tuple(short),
    )


def _hex_score(
    sites: list[tuple[int, int, int]], mine: list[list[float]], theirs: list[list[float]]
) -> float:
    """What a tile on an open hex is worth to a seat, given the (animal,
    colour, paved hexes) of its sites that hold tiles: the animals it
    completes, for itself and as denied to the next seat; the sites it
    leaves one hex from completion, as a risk (the next seat may complete
    them) and a chance (the seat itself may)."""
    score = 0.0
    for animal, colour, paved in sites:
        if paved == 2:
            score += mine[animal][colour] + DENY_WEIGHT * theirs[animal][colour]
        else:
            score += KEEP_WEIGHT * mine[animal][colour] - EXPOSE_WEIGHT * theirs[animal][colour]
    return score


@cache
def _kinds_fitting(first: str | None, second: str | None, third: str | None) -> frozenset[str]:
    """The kinds of tile whose thirds match the colours imposed (None: free)."""
    return frozenset(
        kind
        for kind in TILE_KINDS
        if first in (None, kind[0]) and second in (None, kind[1]) and third in (None, kind[2])
    )


def _fitting(table: Pavement, tiles: list[str]) -> bool:
    """Whether one of ``tiles`` fits on some hex next to the table."""
    kinds = set(tiles)
    return any(not opening.fitting.isdisjoint(kinds) for opening in table.openings.values())


def _lay(table: Pavement, hex_: Hex, kind: str) -> list[Site]:
    """Put ``kind`` on ``hex_``; the animals it completes."""
    done = table.openings.pop(hex_).completes
    table.board[hex_] = kind
    for other in neighbours(hex_):
        if other not in table.board:
            table.openings[other] = _opening(table.board, other, table.weights)
    return [(animal, COLOUR_INDEX[kind[animal]]) for animal in done]


def _mark_completed(table: Pavement, seat: Seat, completed: list[Site]) -> None:
    """The seat's markers on the animals matching its cards, 2-point ones
    first when markers run short (as ``rules._mark``)."""
    worth = table.weights[seat]
    worths = sorted((worth[a][c] for a, c in completed if worth[a][c]), reverse=True)
    table.points[seat] += sum(worths[: table.markers[seat]])
    table.markers[seat] = max(0, table.markers[seat] - len(worths))


def _exchange_at_random(table: Pavement, hand: list[str], rng: random.Random) -> None:
    """Return a tile into the pile, shuffled in, and draw: the tile drawn is
    any of the pile's or the returned one, equally likely."""
    i = rng.randrange(len(hand))
    j = rng.randrange(len(table.pile) + 1)
    if j < len(table.pile):
        hand[i], table.pile[j] = table.pile[j], hand[i]


def _end_turn(table: Pavement) -> None:
    """The game ends when a hand and the pile are empty, or when no tile in
    play fits anywhere; otherwise the next seat plays."""
    in_play = [tile for hand in table.hands for tile in hand] + table.pile
    emptied = not table.pile and any(not hand for hand in table.hands)
    if emptied or not _fitting(table, in_play):
        table.finished = True
    else:
        table.active = (table.active + 1) % len(table.hands)


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
    # Ties are broken by a generator seeded from the key: the same in every world.
    ranked = ranked_placements(state, seat, actions, random.Random(zlib.crc32(key)))
    if state["pile_size"] > LATE_PILE:
        return orjson.dumps([ranked[0][1]])
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


def _final_values(scores: list[float]) -> list[float]:
    """Per seat: its share of the win, and a little for its margin."""
    best = max(scores)
    winners = [seat for seat, score in enumerate(scores) if score == best]
    values = []
    for seat, score in enumerate(scores):
        margin = score - max(p for s, p in enumerate(scores) if s != seat)
        share = 1.0 / len(winners) if seat in winners else 0.0
        values.append((1 - MARGIN_SHARE) * share + MARGIN_SHARE * _logistic(margin))
    return values


def _logistic(value: float) -> float:
    return 1.0 / (1.0 + math.exp(-value / VALUE_SCALE))
