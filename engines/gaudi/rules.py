"""Le jeu des dalles d'Antoni Gaudí: the rules (RULES.md §3).

Players pave the Passeig de Gràcia with hexagonal tiles. Every tile carries a
third of a starfish, of a snail and of a jellyfish, each third orange, green
or blue; three tiles meeting at an animal site make a whole animal, which must
be of one colour. A player who completes an animal matching their secret
animal card or colour card marks it; each marked animal scores 1 point, or 2
when it matches both cards.

Wire format. A tile is a 3-letter code, the colours (``O``, ``G``, ``B``) of
its starfish, snail and jellyfish thirds: ``"OGB"``. The board is a list of
``{"q", "r", "tile"}`` in placement order; completed animals are
``{"q", "r", "animal", "colour", "marker"}`` (anchor coordinates, colour
names ``orange``/``green``/``blue``, ``marker`` a seat or null).

State. A plain JSON dict. Public fields: ``players``, ``short_game``,
``beginner``, ``children``, ``board``, ``animals``, ``markers``, ``active``,
``turn``, ``laid_this_turn``, ``finished``, ``end_reason``. Hidden fields,
kept apart: ``pile`` (drawn from its end), ``hands`` and ``objectives``.
``rng`` is the seed of the next random draw. Points are never stored: they
follow from ``animals`` and ``objectives``.

Decisions taken where RULES.md §3 is silent:

- Start tile: drawn at random among the box's three-colour tiles.
- Number of players outside 2..6, or ``first_player`` naming a missing seat:
  ``IllegalAction("invalid_options")`` from setup.
- With 4 to 6 players the objective cards are dealt from all twelve, so two
  players may hold the same animal (or colour) card.
- Placement order: the rules only require each tile to touch the table (a
  tile laid earlier in the turn counts) and to match colours when it is
  laid; colour matching does not depend on the order, touching does.
  ``legal_actions`` lists each placement (the same tiles on the same hexes)
  once, in one valid order, and identical tiles in hand give one action;
  ``apply`` accepts every valid order of it.
- Markers running short within a turn: the player marks the animals worth 2
  first, then the others in completion order (what a player at the table
  would do).
- Exchange: the returned tile is shuffled into the whole pile, then the top
  tile is drawn (it may be the same one, as at the table). The turn goes on:
  the player then places, exchanges again or passes.
- The "nobody can place" end is checked after every action; the "empty hand
  and empty pile" end as soon as a player's refill leaves them without tiles.
- Points are shown to their owner during the game and to everyone at the
  end (or always, with ``beginner``, whose objectives are public anyway);
  markers left and hand sizes are public.
- The children's game (option ``children``, RULES.md: "only the touching
  and colour-matching conditions hold: any number of tiles of the hand per
  turn (at least one), in any shape"): a child lays one tile per ``place``
  and the turn goes on, with another tile or ``end_turn`` (offered once a
  tile is laid); it ends by itself when the hand is empty or none of its
  tiles fits, then the hand is refilled. Listing every set of up to three
  tiles in any shape would give up to some 8,000 actions a turn; one at a
  time reaches the same pavements with a list of about a hundred. The
  exchange and the pass come before the turn's first tile. ``children``
  overrides ``beginner``. No objectives (``objectives`` is ``[]``), no
  markers (``markers`` all 0), no winner: the outcome reports
  ``animals_completed`` and ``tiles_laid`` (the start tile is not laid by
  anyone), which every outcome carries.
- States stored before the children's game have no ``children`` nor
  ``laid_this_turn``: they read as false and 0, and are never given them.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import orjson

from engines.core import Action, Event, IllegalAction, Seat, State, seeded_rng
from engines.gaudi.geometry import (
    ANIMALS,
    Hex,
    are_adjacent,
    frontier,
    is_compact,
    is_completed,
    is_connected,
    neighbours,
    site_animal,
    site_hexes,
    sites_of,
)

# -- Metadata ---------------------------------------------------------------

NAME = "gaudi"
TITLE = "Le jeu des dalles d'Antoni Gaudí"
MIN_PLAYERS = 2
MAX_PLAYERS = 6

COLOUR_NAMES: dict[str, str] = {"O": "orange", "G": "green", "B": "blue"}
COLOURS: tuple[str, ...] = tuple(COLOUR_NAMES.values())
TILE_KINDS: tuple[str, ...] = tuple("".join(p) for p in itertools.product("OGB", repeat=3))
BOX: dict[str, int] = {kind: 4 if len(set(kind)) == 1 else 3 for kind in TILE_KINDS}
SHORT_GAME_TILES = 50
HAND_SIZE = 3
MAX_TILES_PER_TURN = 3
MARKERS_BY_PLAYERS: dict[int, int] = {2: 35, 3: 25, 4: 25, 5: 15, 6: 15}
START_HEX: Hex = (0, 0)
OBJECTIVE_DEALS = 50  # determinize: random deals tried before a backtracking one

DEFAULT_OPTIONS: dict[str, Any] = {
    "short_game": False,
    "beginner": False,
    "children": False,
    "first_player": 0,
}


# -- The game: setup ----------------------------------------------------------


def setup(options: dict[str, Any], n_players: int, seed: int) -> State:
    """A new match: start tile on (0, 0), hands of 3, secret objectives, markers.

    "On place une dalle qui contienne les trois couleurs au milieu de la
    table. Chaque joueur prend trois dalles de la pile."
    """
    opts = {**DEFAULT_OPTIONS, **options}
    if not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise IllegalAction(
            "invalid_options", f"this game takes {MIN_PLAYERS} to {MAX_PLAYERS} players"
        )
    first = opts["first_player"]
    if first != "random" and not 0 <= first < n_players:
        raise IllegalAction("invalid_options", f"first_player {first} is not a seat of this match")
    state: State = {"rng": seed}
    with seeded_rng(state) as rng:
        box = [kind for kind in TILE_KINDS for _ in range(BOX[kind])]
        rng.shuffle(box)
        start = next(kind for kind in box if len(set(kind)) == 3)
        box.remove(start)
        if opts["short_game"]:
            box = box[: SHORT_GAME_TILES - 1]
        hands = [[box.pop() for _ in range(HAND_SIZE)] for _ in range(n_players)]
        children = bool(opts["children"])
        objectives = [] if children else _deal_objectives(n_players, rng)
        active = rng.randrange(n_players) if first == "random" else first
    state.update(
        {
            "players": n_players,
            "short_game": bool(opts["short_game"]),
            "beginner": bool(opts["beginner"]),
            "children": children,
            "board": [{"q": START_HEX[0], "r": START_HEX[1], "tile": start}],
            "animals": [],
            "markers": [0 if children else MARKERS_BY_PLAYERS[n_players]] * n_players,
            "active": active,
            "turn": 1,
            "laid_this_turn": 0,
            "finished": False,
            "end_reason": None,
            "pile": box,
            "hands": hands,
            "objectives": objectives,
        }
    )
    return state


# -- State operations -----------------------------------------------------------


def to_act(state: State) -> list[Seat]:
    """The active player, alone; nobody once the game is over."""
    return [] if state["finished"] else [state["active"]]


def legal_actions(state: State, seat: Seat) -> list[Action]:
    """Every placement of 1 to 3 hand tiles; else the exchanges; else the pass.

    "Il faut obligatoirement placer une dalle"; the exchange exists only when
    nothing fits, and (decision of RULES.md) only when the pile holds a tile
    that could be placed; otherwise the player passes.
    """
    if seat not in to_act(state):
        return []
    board = _board_map(state)
    hand = state["hands"][seat]
    if state.get("children"):
        placements = _single_placements(board, hand)
        if state.get("laid_this_turn"):
            return [{"type": "place", "tiles": tiles} for tiles in placements] + [
                {"type": "end_turn"}
            ]
    else:
        placements = _placements(board, hand, state["beginner"])
    if placements:
        return [{"type": "place", "tiles": tiles} for tiles in placements]
    if _can_place(board, state["pile"]):
        return [{"type": "exchange", "tile": tile} for tile in sorted(set(hand))]
    return [{"type": "pass"}]


def apply(state: State, seat: Seat, action: Action) -> list[Event]:
    """Check then play ``action``; the state is untouched when it is refused."""
    if seat not in to_act(state):
        raise IllegalAction("not_your_turn", "it is not this seat's turn")
    kind = action.get("type")
    if kind == "place":
        return _apply_place(state, seat, action)
    if kind == "exchange":
        return _apply_exchange(state, seat, action)
    if kind == "pass":
        return _apply_pass(state, seat)
    if kind == "end_turn":
        return _apply_end_turn(state, seat)
    raise IllegalAction("illegal_action", f"unknown action type {kind!r}")


def points(state: State) -> list[int]:
    """Each marked animal: 1 point to its marker's owner, 2 if it matches both cards.

    "compte deux points pour chaque animal qui correspond à ses deux
    objectifs et qui est marqué par l'une de ses fiches."
    """
    totals = [0] * state["players"]
    for animal in state["animals"]:
        owner = animal["marker"]
        if owner is not None:
            totals[owner] += _objective_match(state["objectives"][owner], animal)
    return totals


def outcome(state: State) -> dict[str, Any] | None:
    """None while playing; then the winners (most points, ties shared) and points."""
    if not state["finished"]:
        return None
    if state.get("children"):
        return _children_outcome(state)
    scores = points(state)
    best = max(scores)
    marked = [0] * state["players"]
    for animal in state["animals"]:
        if animal["marker"] is not None:
            marked[animal["marker"]] += 1
    return {
        "winners": [seat for seat, score in enumerate(scores) if score == best],
        "scores": scores,
        "marked": marked,
        "objectives": [dict(o) for o in state["objectives"]],
        "reason": state["end_reason"],
        **_pavement_counts(state),
    }


def _children_outcome(state: State) -> dict[str, Any]:
    """ "the outcome has no winner (``winners: []``) and reports the number of
    completed animals and of tiles laid": nobody scores."""
    n = state["players"]
    return {
        "winners": [],
        "scores": [0] * n,
        "marked": [0] * n,
        "objectives": [],
        "reason": state["end_reason"],
        **_pavement_counts(state),
    }


def _pavement_counts(state: State) -> dict[str, int]:
    """The completed animals, and the tiles the players laid (the start tile is
    not theirs)."""
    return {"animals_completed": len(state["animals"]), "tiles_laid": len(state["board"]) - 1}


# -- Observation ------------------------------------------------------------------


def view(state: State, seat: Seat | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may see: never another's hand, nor the pile.

    Objectives are secret until the end ("il ne faut pas les montrer aux
    autres joueurs avant la fin de la partie"), public with ``beginner``;
    points likewise, since a 2-point marker would betray both cards. ``pile_fits``
    tells the seat to play what its legal actions do when its hand fits nowhere.
    """
    finished = state["finished"]
    children = bool(state.get("children"))
    public = finished or state["beginner"]
    scores = points(state)
    # The seat to play whose hand fits nowhere learns from its legal actions
    # (exchange or pass) whether the pile holds a tile that fits.
    pile_fits = None
    if seat is not None and seat in to_act(state):
        board = _board_map(state)
        if not _can_place(board, state["hands"][seat]):
            pile_fits = _can_place(board, state["pile"])
    # The children's game has neither objectives nor points to show.
    shown = [not children and (public or other == seat) for other in range(state["players"])]
    players = [
        {
            "seat": other,
            "markers_left": state["markers"][other],
            "hand_size": len(state["hands"][other]),
            "points": scores[other] if shown[other] else None,
            "objectives": dict(state["objectives"][other]) if shown[other] else None,
        }
        for other in range(state["players"])
    ]
    return {
        "board": [dict(placed) for placed in state["board"]],
        "animals": [dict(animal) for animal in state["animals"]],
        "hand": None if seat is None else list(state["hands"][seat]),
        "players": players,
        "pile_size": len(state["pile"]),
        "pile_fits": pile_fits,
        "active": state["active"],
        "turn": state["turn"],
        "finished": finished,
        "end_reason": state["end_reason"],
        "short_game": state["short_game"],
        "beginner": state["beginner"],
        # States stored before the children's game read as the game for grown-ups.
        "children": children,
        "laid_this_turn": state.get("laid_this_turn", 0),
    }


def determinize(state: State, seat: Seat | None, rng: random.Random) -> State:
    """A new state that ``seat`` (None: a spectator) cannot tell from ``state``.

    The tiles ``seat`` has not seen (the box less the board and its own
    hand) are one pool, dealt anew from its sorted list: the other hands
    (sizes kept), then the pile (size kept); in a short game the rest stays
    out of the box. Hidden objectives are redealt from the cards ``seat``
    does not hold, among those consistent with the markers on the table
    (``objective_candidates``). What the seat's own legal actions tell is
    kept: when none of its tiles fits, the pile holds a placeable tile
    exactly when the real one does (exchange or pass), and an unfinished
    game is never left blocked. The generator of later draws is reseeded,
    and the new state records whose sample it is (``observer``: the seat
    and the turn; the bots' search weighs alternatives there only);
    ``state`` is left untouched.
    """
    new: State = orjson.loads(orjson.dumps(state))
    hidden = [s for s in range(new["players"]) if s != seat]
    if not (new["finished"] or new["beginner"] or new.get("children")):
        for s, objective in zip(hidden, _sampled_objectives(new, seat, hidden, rng), strict=True):
            new["objectives"][s] = objective
    board = _board_map(new)
    own_fits = seat is not None and _can_place(board, new["hands"][seat])
    # When none of its tiles fits, the seat's legal actions (exchange or
    # pass) tell whether the pile holds a placeable tile.
    pile_placeable = None
    if not own_fits and seat in to_act(new):
        pile_placeable = _can_place(board, new["pile"])
    unseen = Counter(BOX)
    unseen.subtract(placed["tile"] for placed in new["board"])
    if seat is not None:
        unseen.subtract(new["hands"][seat])
    pool = sorted(unseen.elements())
    rng.shuffle(pool)
    slots = [(s, i) for s in hidden for i in range(len(new["hands"][s]))]
    pile_start = len(slots)
    slots += [(None, i) for i in range(len(new["pile"]))]
    if pile_placeable is not None or not (own_fits or new["finished"]):
        placeable = _placeable_kinds(board, [kind for kind, count in unseen.items() if count])
        _keep_pile_requirement(pool, pile_start, len(slots), placeable, pile_placeable, rng)
        if not new["finished"]:
            ends = pile_start if pile_placeable is False else len(slots)
            _keep_unblocked(pool, len(slots), ends, placeable, rng)
    for (s, i), tile in zip(slots, pool, strict=False):
        if s is None:
            new["pile"][i] = tile
        else:
            new["hands"][s][i] = tile
    new["rng"] = rng.getrandbits(63)
    new["observer"] = {"seat": seat, "turn": new["turn"]}
    return new


def objective_candidates(state: State, seat: Seat | None, other: Seat) -> list[dict[str, str]]:
    """The objectives ``other`` may hold, as far as ``seat`` (None: a spectator) can tell.

    Public objectives (``beginner``, or the game over) are known. Otherwise:
    with 2 or 3 players no card is shared, so ``other`` holds neither of
    ``seat``'s cards; every animal ``other`` marked matches one of its cards;
    and with 2 players, an unmarked animal that matches ``seat``'s cards
    while ``seat`` still has markers was completed by ``other``, so matches
    none of ``other``'s cards (while ``other`` still has markers too).
    """
    if state["finished"] or state["beginner"] or other == seat:
        return [dict(state["objectives"][other])]
    mine = None if seat is None else state["objectives"][seat]
    distinct = state["players"] <= 3
    marked, unmatched = _marker_evidence(state, seat, other)
    candidates = []
    for animal in ANIMALS:
        for colour in COLOURS:
            objective = {"animal": animal, "colour": colour}
            if mine is not None and distinct and _objective_match(mine, objective):
                continue
            if all(_objective_match(objective, a) for a in marked) and not any(
                _objective_match(objective, a) for a in unmatched
            ):
                candidates.append(objective)
    return candidates


# -- Private helpers: setup ---------------------------------------------------------


def _deal_objectives(n_players: int, rng: random.Random) -> list[dict[str, str]]:
    """One animal card and one colour card each, at random.

    "Pour 2 ou 3 joueurs ... on retire 3 cartes d'objectif Animal et 3 cartes
    d'objectif Couleur de manière à ce que les 6 cartes qui restent soient
    toutes différentes."
    """
    copies = 1 if n_players <= 3 else 2
    animals = [animal for animal in ANIMALS for _ in range(copies)]
    colours = [colour for colour in COLOURS for _ in range(copies)]
    rng.shuffle(animals)
    rng.shuffle(colours)
    return [{"animal": animals[i], "colour": colours[i]} for i in range(n_players)]


# -- Private helpers: board -------------------------------------------------------


def _board_map(state: State) -> dict[Hex, str]:
    return {(placed["q"], placed["r"]): placed["tile"] for placed in state["board"]}


def _site_partners(parity: int) -> tuple[tuple[int, Hex, Hex], ...]:
    """Per animal, the offsets from a hex to the two other hexes of its site.

    They depend only on the hex's ``(q - r) mod 3``; read off the geometry.
    """
    hex_ = (parity, 0)
    partners = []
    for animal, anchor in enumerate(sites_of(hex_)):
        a, b = (h for h in site_hexes(anchor) if h != hex_)
        partners.append((animal, (a[0] - parity, a[1]), (b[0] - parity, b[1])))
    return tuple(partners)


# The same three offsets serve every hex of one (q - r) mod 3 class; precomputed
# because legal_actions probes hundreds of hexes per call.
_SITE_PARTNERS: tuple[tuple[tuple[int, Hex, Hex], ...], ...] = tuple(
    _site_partners(parity) for parity in range(3)
)

Requirement = tuple[str | None, str | None, str | None]


def _probe(board: dict[Hex, str], hex_: Hex) -> tuple[Requirement, int]:
    """What a tile on the empty ``hex_`` must match, and how many animals it would complete.

    "de manière à ce que l'animal et la couleur coïncident avec une dalle
    déjà en jeu": a site already holding tiles fixes its animal's colour
    (None: any colour). A site is completed when its two other hexes are
    filled.
    """
    q, r = hex_
    required: list[str | None] = [None, None, None]
    completes = 0
    for animal, (aq, ar), (bq, br) in _SITE_PARTNERS[(q - r) % 3]:
        first = board.get((q + aq, r + ar))
        second = board.get((q + bq, r + br))
        if first is not None:
            required[animal] = first[animal]
            if second is not None:
                completes += 1
        elif second is not None:
            required[animal] = second[animal]
    return (required[0], required[1], required[2]), completes


def _requirement(board: dict[Hex, str], hex_: Hex) -> Requirement:
    return _probe(board, hex_)[0]


def _fits(tile: str, required: Requirement) -> bool:
    need0, need1, need2 = required
    return (
        (need0 is None or need0 == tile[0])
        and (need1 is None or need1 == tile[1])
        and (need2 is None or need2 == tile[2])
    )


def _touches(board: dict[Hex, str], hex_: Hex) -> bool:
    return any(n in board for n in neighbours(hex_))


# -- Private helpers: legal placements -----------------------------------------------


def _placements(board: dict[Hex, str], hand: list[str], beginner: bool) -> list[list[dict]]:
    """Every legal placement, each once, in a valid order.

    Pruned as the rules allow: the first tile goes on a hex touching the
    table; a second tile touches the first ("les 2 ou 3 dalles doivent se
    toucher"); a third touches one of them and, outside beginner rules, not
    both ("sans former un bloc compact"); each matches the colours present.
    Two tiles must complete an animal, three must complete two: a completed
    animal is counted when its last hex is filled. ``board`` is borrowed and
    restored.
    """
    kinds = sorted(set(hand))
    counts = Counter(hand)
    ring = sorted(frontier(board))
    ring_set = set(ring)
    chosen: list[tuple[Hex, str]] = []
    seen: set[frozenset] = set()
    found: list[list[dict]] = []

    def extend(completed: int) -> None:
        depth = len(chosen)
        for hex_ in _next_hexes(board, ring, ring_set, chosen, beginner):
            required, completes = _probe(board, hex_)
            total = completed + completes
            if depth == MAX_TILES_PER_TURN - 1 and not beginner and total < depth:
                continue
            for tile in kinds:
                if counts[tile] == 0 or not _fits(tile, required):
                    continue
                chosen.append((hex_, tile))
                key = frozenset(chosen)
                if (beginner or total >= depth) and key not in seen:
                    seen.add(key)
                    found.append([{"tile": t, "q": h[0], "r": h[1]} for h, t in chosen])
                if depth + 1 < MAX_TILES_PER_TURN:
                    board[hex_] = tile
                    counts[tile] -= 1
                    extend(total)
                    counts[tile] += 1
                    del board[hex_]
                chosen.pop()

    extend(0)
    return found


def _single_placements(board: dict[Hex, str], hand: list[str]) -> list[list[dict]]:
    """The children's game: every tile of the hand on every hex touching the
    table where its colours match, one tile at a time."""
    kinds = sorted(set(hand))
    found = []
    for hex_ in sorted(frontier(board)):
        required = _requirement(board, hex_)
        found += [
            [{"tile": tile, "q": hex_[0], "r": hex_[1]}] for tile in kinds if _fits(tile, required)
        ]
    return found


def _next_hexes(
    board: dict[Hex, str],
    ring: list[Hex],
    ring_set: set[Hex],
    chosen: list[tuple[Hex, str]],
    beginner: bool,
) -> list[Hex]:
    """Where the next tile of the turn may go, before colours are checked.

    Each group is searched from its first hex in ``ring`` (the hexes touching
    the table, sorted), which always gives a valid order; later tiles never
    go on a ring hex sorting before the first one, so that a group is not
    searched again from another of its hexes.
    """
    if not chosen:
        return ring
    first = chosen[0][0]
    placed = [h for h, _ in chosen]
    candidates = {
        n
        for h in placed
        for n in neighbours(h)
        if n not in board and not (n < first and n in ring_set)
    }
    if len(placed) == 2 and not beginner:
        candidates = {c for c in candidates if not all(are_adjacent(c, h) for h in placed)}
    return sorted(candidates)


def _can_place(board: dict[Hex, str], tiles: list[str]) -> bool:
    """Whether one of ``tiles`` fits on some hex touching the table.

    Walks the table's neighbours lazily, newest tiles first: the answer is
    usually found within a few hexes.
    """
    kinds = set(tiles)
    if not kinds:
        return False
    for placed in reversed(board):
        for hex_ in neighbours(placed):
            if hex_ not in board:
                required = _requirement(board, hex_)
                if any(_fits(kind, required) for kind in kinds):
                    return True
    return False


# -- Private helpers: apply ------------------------------------------------------------


def _apply_place(state: State, seat: Seat, action: Action) -> list[Event]:
    """Lay 1 to 3 tiles, mark the completed animals, refill, pass the turn.

    "Lorsqu'un joueur complète un animal qui correspond à l'un de ses deux
    objectifs (ou aux deux), il place une fiche ... Après avoir placé 1, 2 ou
    3 dalles, le joueur pioche dans la pile afin d'en avoir toujours 3."
    """
    children = state.get("children")
    tiles = action.get("tiles")
    if children and isinstance(tiles, list) and len(tiles) != 1:
        raise IllegalAction("illegal_action", "in the children's game, lay one tile at a time")
    chosen, board, anchors = _checked_placement(state, seat, tiles)
    hand = state["hands"][seat]
    events: list[Event] = []
    for hex_, tile in chosen:
        hand.remove(tile)
        state["board"].append({"q": hex_[0], "r": hex_[1], "tile": tile})
        events.append(
            {"type": "tile_placed", "seat": seat, "q": hex_[0], "r": hex_[1], "tile": tile}
        )
    completed = [_animal(board, anchor) for anchor in anchors]
    if not children:
        _mark(state, seat, completed)
    for animal in completed:
        state["animals"].append(animal)
        events.append({"type": "animal_completed", "seat": seat, **animal})
    if children:
        state["laid_this_turn"] = state.get("laid_this_turn", 0) + 1
        if _can_place(board, hand):
            return events  # the child may lay another tile, or stop
    events.extend(_refill(state, seat))
    events.extend(_next_turn(state, board))
    return events


def _checked_placement(
    state: State, seat: Seat, tiles: Any
) -> tuple[list[tuple[Hex, str]], dict[Hex, str], list[Hex]]:
    """The placement as (hex, tile) pairs, the board after it and the sites it
    completes (in completion order), or IllegalAction with the reason."""
    if not isinstance(tiles, list) or not 1 <= len(tiles) <= MAX_TILES_PER_TURN:
        raise IllegalAction("illegal_action", "place 1, 2 or 3 tiles")
    chosen = [_checked_tile(placed) for placed in tiles]
    missing = Counter(t for _, t in chosen) - Counter(state["hands"][seat])
    if missing:
        raise IllegalAction("illegal_action", f"tile {sorted(missing)[0]} is not in your hand")
    board = _board_map(state)
    completed: list[Hex] = []
    for i, (hex_, tile) in enumerate(chosen, 1):
        where = f"tile {i} ({tile} at q={hex_[0]}, r={hex_[1]})"
        if hex_ in board:
            raise IllegalAction("illegal_action", f"{where}: that hex is already paved")
        if not _touches(board, hex_):
            raise IllegalAction("illegal_action", f"{where} touches no tile on the table")
        required = _requirement(board, hex_)
        for animal, (need, colour) in enumerate(zip(required, tile, strict=True)):
            if need is not None and need != colour:
                raise IllegalAction(
                    "illegal_action",
                    f"{where}: its {ANIMALS[animal]} is {COLOUR_NAMES[colour]} "
                    f"but that {ANIMALS[animal]} is {COLOUR_NAMES[need]}",
                )
        board[hex_] = tile
        completed += [anchor for anchor in sites_of(hex_) if is_completed(anchor, board)]
    _check_group(state["beginner"], [h for h, _ in chosen], len(completed))
    return chosen, board, completed


def _checked_tile(placed: Any) -> tuple[Hex, str]:
    if not isinstance(placed, dict):
        raise IllegalAction("illegal_action", "each placed tile is {tile, q, r}")
    tile, q, r = placed.get("tile"), placed.get("q"), placed.get("r")
    if tile not in TILE_KINDS:
        raise IllegalAction("illegal_action", f"{tile!r} is not a tile code")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (q, r)):
        raise IllegalAction("illegal_action", "q and r must be integers")
    return (q, r), tile


def _check_group(beginner: bool, hexes: list[Hex], completed: int) -> None:
    """The two conditions for 2 or 3 tiles (only the first, loosened, for beginners).

    "1. Les 2 ou 3 dalles doivent se toucher, mais sans former un bloc
    compact. 2. Pour placer 2 dalles, il doit compléter au moins un animal
    ... S'il veut placer 3 dalles, il doit compléter deux animaux."
    """
    if len(hexes) == 1:
        return
    if not is_connected(hexes):
        raise IllegalAction("illegal_action", "the tiles of a turn must touch one another")
    if not beginner and is_compact(hexes):
        raise IllegalAction("illegal_action", "three tiles may not form a compact block")
    needed = len(hexes) - 1
    if not beginner and completed < needed:
        raise IllegalAction(
            "illegal_action",
            f"placing {len(hexes)} tiles must complete at least {needed} "
            f"animal{'s' if needed > 1 else ''}",
        )


def _animal(board: dict[Hex, str], anchor: Hex) -> dict[str, Any]:
    animal = site_animal(anchor)
    colour = board[anchor][animal]
    return {
        "q": anchor[0],
        "r": anchor[1],
        "animal": ANIMALS[animal],
        "colour": COLOUR_NAMES[colour],
        "marker": None,
    }


def _objective_match(objective: dict[str, str], animal: dict[str, Any]) -> int:
    """How many of the two cards the animal matches (0, 1 or 2)."""
    return (animal["animal"] == objective["animal"]) + (animal["colour"] == objective["colour"])


def _mark(state: State, seat: Seat, completed: list[dict[str, Any]]) -> None:
    """Put the active player's markers on the completed animals matching a card.

    Only the active player marks ("si l'animal ne fait pas partie de ses
    objectifs, il ne doit placer aucune fiche"), while markers last; when
    they run short, 2-point animals first (decision).
    """
    objective = state["objectives"][seat]
    worth = [_objective_match(objective, animal) for animal in completed]
    order = sorted((i for i, value in enumerate(worth) if value), key=lambda i: (-worth[i], i))
    for i in order:
        if state["markers"][seat] == 0:
            break
        state["markers"][seat] -= 1
        completed[i]["marker"] = seat


def _refill(state: State, seat: Seat) -> list[Event]:
    """Draw back up to 3 tiles while the pile lasts; only the drawer sees them."""
    hand, pile = state["hands"][seat], state["pile"]
    drawn = [pile.pop() for _ in range(min(HAND_SIZE - len(hand), len(pile)))]
    hand.extend(drawn)
    if not drawn:
        return []
    return [
        {"type": "refill", "seat": seat, "count": len(drawn)},
        {"type": "drew", "seat": seat, "tiles": drawn, "to": [seat]},
    ]


def _apply_exchange(state: State, seat: Seat, action: Action) -> list[Event]:
    """Nothing fits: return a tile into the pile (shuffled in) and draw one.

    "Il se peut que parfois aucune des 3 dalles ne se marie avec les dalles
    déjà sur la table. Dans ce cas, le joueur remet une dalle dans la pile,
    en prend une autre et joue."
    """
    tile = action.get("tile")
    hand = state["hands"][seat]
    _require_turn_start(state)
    if tile not in hand:
        raise IllegalAction("illegal_action", f"tile {tile!r} is not in your hand")
    board = _board_map(state)
    if _can_place(board, hand):
        raise IllegalAction("illegal_action", "a tile of your hand can be placed: place it")
    if not _can_place(board, state["pile"]):
        raise IllegalAction("illegal_action", "no tile of the pile could be placed: pass")
    hand.remove(tile)
    state["pile"].append(tile)
    with seeded_rng(state) as rng:
        rng.shuffle(state["pile"])
    drawn = state["pile"].pop()
    hand.append(drawn)
    return [
        {"type": "exchange", "seat": seat},
        {"type": "exchanged", "seat": seat, "returned": tile, "drew": drawn, "to": [seat]},
    ]


def _apply_pass(state: State, seat: Seat) -> list[Event]:
    """Neither a hand tile nor a pile tile fits anywhere: the turn passes."""
    _require_turn_start(state)
    board = _board_map(state)
    if _can_place(board, state["hands"][seat]):
        raise IllegalAction("illegal_action", "a tile of your hand can be placed: place it")
    if _can_place(board, state["pile"]):
        raise IllegalAction("illegal_action", "a tile of the pile could be placed: exchange")
    return [{"type": "pass", "seat": seat}, *_next_turn(state, board)]


def _require_turn_start(state: State) -> None:
    """The exchange and the pass come before any tile of the turn (in the
    children's game a turn may lay several tiles one by one)."""
    if state.get("laid_this_turn"):
        raise IllegalAction("illegal_action", "you have laid a tile this turn: end your turn")


def _apply_end_turn(state: State, seat: Seat) -> list[Event]:
    """The children's game: "any number of tiles of the hand per turn (at least
    one)"; the child stops, the hand is refilled and play passes on."""
    if not state.get("children"):
        raise IllegalAction("illegal_action", "end_turn belongs to the children's game")
    if not state.get("laid_this_turn"):
        raise IllegalAction("illegal_action", "lay at least one tile before you stop")
    events: list[Event] = [{"type": "end_turn", "seat": seat}]
    events.extend(_refill(state, seat))
    events.extend(_next_turn(state, _board_map(state)))
    return events


def _next_turn(state: State, board: dict[Hex, str]) -> list[Event]:
    """End the game if it is over, else give the turn to the next seat (clockwise).

    "La partie se termine lorsqu'un joueur n'a plus de dalles et qu'il n'en
    reste plus non plus dans la pile"; or (RULES.md decision) when no player
    can place any tile and the pile holds no placeable tile.
    """
    reason = _end_reason(state, board)
    if "laid_this_turn" in state:  # states stored before the children's game lack it
        state["laid_this_turn"] = 0
    if reason is None:
        state["active"] = (state["active"] + 1) % state["players"]
        state["turn"] += 1
        return [{"type": "turn", "seat": state["active"], "turn": state["turn"]}]
    state["finished"] = True
    state["end_reason"] = reason
    state["active"] = None
    result = outcome(state)
    assert result is not None
    return [{"type": "match_over", **result}]


def _end_reason(state: State, board: dict[Hex, str]) -> str | None:
    if not state["pile"] and any(not hand for hand in state["hands"]):
        return "hand_and_pile_empty"
    everything = [tile for hand in state["hands"] for tile in hand] + state["pile"]
    if not _can_place(board, everything):
        return "blocked"
    return None


# -- Private helpers: determinization ---------------------------------------------


def _sampled_objectives(
    state: State, seat: Seat | None, hidden: list[Seat], rng: random.Random
) -> list[dict[str, str]]:
    """Objectives for the ``hidden`` seats, dealt as at setup from the cards
    ``seat`` does not hold, until they fit ``objective_candidates``; a
    backtracking deal when chance keeps failing."""
    copies = 1 if state["players"] <= 3 else 2
    animals = [animal for animal in ANIMALS for _ in range(copies)]
    colours = [colour for colour in COLOURS for _ in range(copies)]
    if seat is not None:
        animals.remove(state["objectives"][seat]["animal"])
        colours.remove(state["objectives"][seat]["colour"])
    allowed = [objective_candidates(state, seat, s) for s in hidden]
    for _ in range(OBJECTIVE_DEALS):
        rng.shuffle(animals)
        rng.shuffle(colours)
        dealt = [{"animal": a, "colour": c} for a, c in zip(animals, colours, strict=False)]
        if all(dealt[i] in allowed[i] for i in range(len(hidden))):
            return dealt[: len(hidden)]
    found = _backtrack_objectives(allowed, Counter(animals), Counter(colours), rng)
    return found if found is not None else dealt[: len(hidden)]


def _backtrack_objectives(
    allowed: list[list[dict[str, str]]],
    animals: Counter,
    colours: Counter,
    rng: random.Random,
) -> list[dict[str, str]] | None:
    """A deal giving each seat one of its ``allowed`` objectives from the
    cards left, tried in random order; None when there is none."""
    if not allowed:
        return []
    options = list(allowed[0])
    rng.shuffle(options)
    for objective in options:
        animal, colour = objective["animal"], objective["colour"]
        if animals[animal] <= 0 or colours[colour] <= 0:
            continue
        animals[animal] -= 1
        colours[colour] -= 1
        rest = _backtrack_objectives(allowed[1:], animals, colours, rng)
        animals[animal] += 1
        colours[colour] += 1
        if rest is not None:
            return [dict(objective), *rest]
    return None


def _marker_evidence(
    state: State, seat: Seat | None, other: Seat
) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The distinct animals (as ``{animal, colour}``) that ``other``'s
    objective must match (it marked them), and those it cannot match (see
    ``objective_candidates``)."""
    mine = None if seat is None else state["objectives"][seat]
    inferred = (
        mine is not None
        and state["players"] == 2
        and state["markers"][seat] > 0
        and state["markers"][other] > 0
    )
    marked: dict[tuple[str, str], dict[str, str]] = {}
    unmatched: dict[tuple[str, str], dict[str, str]] = {}
    for animal in state["animals"]:
        key = (animal["animal"], animal["colour"])
        if animal["marker"] == other:
            marked[key] = {"animal": key[0], "colour": key[1]}
        elif inferred and animal["marker"] is None and _objective_match(mine, animal):
            unmatched[key] = {"animal": key[0], "colour": key[1]}
    return list(marked.values()), list(unmatched.values())


def _placeable_kinds(board: dict[Hex, str], kinds: list[str]) -> set[str]:
    """The ``kinds`` of tile that fit on some hex touching the table."""
    requirements = {_requirement(board, hex_) for hex_ in frontier(board)}
    return {kind for kind in kinds if any(_fits(kind, need) for need in requirements)}


def _keep_pile_requirement(
    pool: list[str],
    start: int,
    end: int,
    placeable: set[str],
    required: bool | None,
    rng: random.Random,
) -> None:
    """Swap tiles into or out of the pile (``pool[start:end]``) so that it
    holds a placeable tile exactly when ``required`` says so."""
    if required is None or start == end:
        return
    inside = [i for i in range(start, end) if pool[i] in placeable]
    outside = [i for i in range(len(pool)) if not start <= i < end]
    if required and not inside:
        donors = [i for i in outside if pool[i] in placeable]
        if donors:
            i, j = rng.randrange(start, end), rng.choice(donors)
            pool[i], pool[j] = pool[j], pool[i]
    elif not required and inside:
        donors = [i for i in outside if pool[i] not in placeable]
        rng.shuffle(donors)
        for i, j in zip(inside, donors, strict=False):
            pool[i], pool[j] = pool[j], pool[i]


def _keep_unblocked(
    pool: list[str],
    dealt: int,
    targets: int,
    placeable: set[str],
    rng: random.Random,
) -> None:
    """When no tile in play (``pool[:dealt]``; the seat's own hand does not
    fit) fits anywhere, swap a placeable tile left out of the box into
    ``pool[:targets]``."""
    if any(pool[i] in placeable for i in range(dealt)) or not targets:
        return
    donors = [i for i in range(dealt, len(pool)) if pool[i] in placeable]
    if donors:
        i, j = rng.randrange(targets), rng.choice(donors)
        pool[i], pool[j] = pool[j], pool[i]


# -- Rebuilding a state from a view ---------------------------------------------------


def state_from_view(seen: dict[str, Any], seat: Seat | None, rng: random.Random) -> State:
    """A complete state consistent with ``seen``, ``view(state, seat)``
    after a JSON round trip, for a bot that only has its seat's view.

    Everything in the view is kept; the other hands and the pile get
    placeholder tiles (sizes from the view) and secret objectives a
    placeholder card, which ``determinize`` then deals at random from the
    tiles and cards ``seat`` has not seen, along with the seed of later
    draws. The pile's placeholder fits exactly when ``pile_fits`` says so,
    which ``determinize`` keeps. So ``view(state_from_view(view(s, seat),
    seat, rng), seat) == view(s, seat)``. Raises ValueError when the view
    cannot come from a real state.
    """
    players = seen["players"]
    n_players = len(players)
    board = [{"q": p["q"], "r": p["r"], "tile": p["tile"]} for p in seen["board"]]
    own = [] if seat is None else list(seen["hand"])
    unseen = Counter(BOX)
    unseen.subtract([placed["tile"] for placed in board] + own)
    hidden_sizes = [p["hand_size"] for p in players if p["seat"] != seat]
    if min(unseen.values()) < 0 or unseen.total() < sum(hidden_sizes) + seen["pile_size"]:
        raise ValueError("the view shows more tiles than the box holds")
    # Placeholders only: determinize deals every hidden tile and card anew.
    filler = TILE_KINDS[0]
    if seen.get("pile_fits") is not None:
        table = _board_map({"board": board})
        filler = next(
            (kind for kind in TILE_KINDS if _can_place(table, [kind]) == seen["pile_fits"]),
            filler,
        )
    hands = [own if p["seat"] == seat else [filler] * p["hand_size"] for p in players]
    unknown = {"animal": ANIMALS[0], "colour": COLOURS[0]}
    skeleton: State = {
        "rng": 0,
        "players": n_players,
        "short_game": seen["short_game"],
        "beginner": seen["beginner"],
        "children": seen["children"],
        "board": board,
        "animals": [dict(animal) for animal in seen["animals"]],
        "markers": [p["markers_left"] for p in players],
        "active": seen["active"],
        "turn": seen["turn"],
        "laid_this_turn": seen["laid_this_turn"],
        "finished": seen["finished"],
        "end_reason": seen["end_reason"],
        "pile": [filler] * seen["pile_size"],
        "hands": hands,
        "objectives": []
        if seen["children"]
        else [dict(p["objectives"] or unknown) for p in players],
    }
    state = determinize(skeleton, seat, rng)
    del state["observer"]  # the shape of a real state, not of a search's sample
    return state
