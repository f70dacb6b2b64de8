"""Dékal: the rules (RULES.md §1; rulebooks 000 and 001).

Each player owns a 4x4 grid of cards that nobody, not even its owner, has
seen. A manche is 16 turns: everyone secretly chooses one face-down card of
their own grid, all chosen cards are revealed at once into the centre, then
each player in turn takes one card from the centre and pushes it back into
their grid from outside, along the row or column of their hole. At the end,
orthogonally adjacent equal cards cancel; the lowest sum of what is left
wins.

The state is a plain JSON dict. Hidden information lives in three fields and
nowhere else:

- ``grids[seat][row][col]``: every card value, including face-down ones
  (those where ``face_up[seat][row][col]`` is false, which nobody knows);
- ``reserve``: the undealt cards, face down, drawn from the end;
- ``choices[seat]``: a seat's reveal choice, known only to that seat until
  every seat has chosen (then the cards are revealed and choices cleared).

``determinize(state, seat, rng)`` resamples exactly these (and the seed of
later deals) for the bots' search; ``state_from_view(view, seat, rng)``
builds a whole state from a seat's view alone, for bots that play through
the API.

Events returned by ``apply`` (all public: once revealed, a value is seen by
everyone; nothing secret is ever in an event):

- ``chosen`` {seat}: a seat has made its reveal choice (not which card);
- ``revealed`` {manche, turn, cards: [{seat, row, col, value}]}: every
  chosen card at once, now in the centre, each leaving a hole;
- ``reserve_drawn`` {draws: [{seat, value}]}: one round of the tie-break;
- ``first_player`` {seat, by: lowest_card | reserve | random}: turn 1's
  first player, when decided by the reveal;
- ``taken`` {seat, value, from, hole}: a card pushed in from that side of
  the hole's row or column;
- ``turn_started`` {manche, turn, first_player};
- ``manche_scored`` {manche, first_player, grids, scores, cards_left,
  cancelled, totals}; then ``manche_started`` {manche, first_player} or
  ``match_over`` {the outcome}.

Decisions taken where RULES.md and the rulebooks are silent:

- Reserve tie-break for the first player: the tied seats draw in seat order,
  one card each, from the end of the reserve; drawn cards are set aside face
  up beside the reserve (public, never drawn again, still counted among the
  100 cards). A round of draws happens only if the reserve holds a card for
  every seat still tied; otherwise the tie is broken at random (seeded).
- ``first_player: "random"`` or a seat number fixes the first player of turn
  1 of the first manche at setup; later manches rotate as with
  ``lowest_card`` (the seat after the previous manche's turn-1 first player).
- In a multi-manche game all 100 cards are gathered and reshuffled for each
  manche; the reserve's face-up draws go back into the deck too.
- When the match is over the phase is ``"over"``; the final grids stay on
  the table (all face up) and the last manche's cancelled cells are in
  ``view["manches"]``.
- ``target_score`` is capped at 1000 (the rulebook plays to 100) so that a
  match always ends in a bounded number of manches in practice.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson

from engines.core import Action, Event, IllegalAction, Seat, State, seeded_rng

# -- metadata --------------------------------------------------------------

NAME = "dekal"
TITLE = "Dékal"
MIN_PLAYERS = 2
MAX_PLAYERS = 6
SIZE = 4
CELLS = SIZE * SIZE
TURNS = CELLS
VALUES = range(1, 11)
COPIES = 10
DECK_SIZE = len(VALUES) * COPIES
DIRECTIONS = ("left", "right", "top", "bottom")
PHASES = ("reveal", "draft", "over")
FIRST_PLAYER_RULES = ("lowest_card", "random")
MAX_TARGET_SCORE = 1000

Position = dict[str, int]
Grid = list[list[Any]]


# -- game ------------------------------------------------------------------


def setup(options: dict[str, Any], n_players: int, seed: int) -> State:
    """A new match: shuffle the 100 cards, deal 16 face down to each grid.

    "Mélangez et distribuez 16 cartes à chacun. Sans regarder la valeur
    faciale de vos cartes, formez un carré de 4 cartes sur 4."
    """
    target, first = _checked_options(options, n_players)
    state: State = {
        "n_players": n_players,
        "options": {"target_score": target, "first_player": first},
        "rng": seed,
        "manche": 1,
        "turn": 1,
        "phase": "reveal",
        "starter": None,
        "first_player": None,
        "current": None,
        "grids": [],
        "face_up": [],
        "holes": [None] * n_players,
        "choices": [None] * n_players,
        "centre": [],
        "reserve": [],
        "reserve_drawn": [],
        "totals": [0] * n_players,
        "manches": [],
    }
    with seeded_rng(state) as rng:
        _deal(state, rng.sample(_deck(), DECK_SIZE))
        if first == "random":
            state["starter"] = rng.randrange(n_players)
    if isinstance(first, int):
        state["starter"] = first
    state["first_player"] = state["starter"]
    return state


# -- state -----------------------------------------------------------------


def to_act(state: State) -> list[Seat]:
    """Reveal: every seat that has not chosen yet. Draft: the seat taking."""
    phase = state["phase"]
    if phase == "reveal":
        return [s for s, choice in enumerate(state["choices"]) if choice is None]
    if phase == "draft":
        return [state["current"]]
    return []


def legal_actions(state: State, seat: Seat) -> list[Action]:
    """Every legal action of ``seat``; each distinct (value, direction) once."""
    if seat not in to_act(state):
        return []
    if state["phase"] == "reveal":
        face_up = state["face_up"][seat]
        return [
            {"type": "reveal", "row": r, "col": c}
            for r in range(SIZE)
            for c in range(SIZE)
            if not face_up[r][c]
        ]
    directions = legal_directions(state["holes"][seat])
    return [
        {"type": "take", "value": value, "from": direction}
        for value in sorted(set(state["centre"]))
        for direction in directions
    ]


def apply(state: State, seat: Seat, action: Action) -> list[Event]:
    """Check ``action`` completely, then play it; return the events."""
    if not _is_int(seat) or seat not in to_act(state):
        raise IllegalAction("not_your_turn", f"seat {seat} may not act now")
    expected = "reveal" if state["phase"] == "reveal" else "take"
    if not isinstance(action, dict) or action.get("type") != expected:
        raise IllegalAction("illegal_action", f"the {state['phase']} phase expects a {expected!r}")
    if expected == "reveal":
        position = _checked_reveal(state, seat, action)
        return _choose(state, seat, position)
    value, direction = _checked_take(state, seat, action)
    return _take(state, seat, value, direction)


def legal_directions(hole: Position) -> list[str]:
    """The sides a card may enter from to close ``hole``.

    "Il est interdit de jouer la carte directement sur l'emplacement vide":
    a side is refused when the hole lies on that edge, so a corner hole
    allows 2 directions, an edge hole 3, an inner hole 4.
    """
    row, col = hole["row"], hole["col"]
    allowed = {"left": col > 0, "right": col < SIZE - 1, "top": row > 0, "bottom": row < SIZE - 1}
    return [d for d in DIRECTIONS if allowed[d]]


def score_grid(grid: Grid) -> dict[str, Any]:
    """Cancel, then count: ``{"score", "cards_left", "cancelled"}``.

    "Toutes les cartes adjacentes orthogonalement de même valeur s'annulent
    et sont retirées du jeu. Comptez la valeur totale de l'ensemble des
    cartes encore présentes." A card cancels when at least one orthogonal
    neighbour has its value; a lone card stays.
    """
    cancelled: list[Position] = []
    score = cards_left = 0
    for r in range(SIZE):
        for c in range(SIZE):
            value = grid[r][c]
            if any(grid[nr][nc] == value for nr, nc in _neighbours(r, c)):
                cancelled.append({"row": r, "col": c})
            else:
                score += value
                cards_left += 1
    return {"score": score, "cards_left": cards_left, "cancelled": cancelled}


def winners(scores: list[int], cards_left: list[int] | None) -> list[Seat]:
    """Lowest score wins; then fewer cards left (when given); else shared."""
    keys = [(score, cards_left[s] if cards_left else 0) for s, score in enumerate(scores)]
    best = min(keys)
    return [s for s, key in enumerate(keys) if key == best]


# -- observation -----------------------------------------------------------


def view(state: State, seat: Seat | None) -> dict[str, Any]:
    """What ``seat`` (None: a spectator) may see.

    Face-down cards all look alike, ``{"face_up": false, "value": null}``,
    to everyone including their owner; other seats' reveal choices show only
    as ``chosen``; a seat's own choice is in ``my_choice``.
    """
    n = state["n_players"]
    if seat is not None and not 0 <= seat < n:
        raise ValueError(f"no seat {seat} in a {n}-player match")
    seen: dict[str, Any] = {
        "seat": seat,
        "n_players": n,
        "target_score": state["options"]["target_score"],
        "manche": state["manche"],
        "turn": state["turn"],
        "phase": state["phase"],
        "first_player": state["first_player"],
        "current": state["current"],
        "centre": list(state["centre"]),
        "reserve": {"count": len(state["reserve"]), "drawn": list(state["reserve_drawn"])},
        "players": [_player_view(state, s) for s in range(n)],
        "manches": [_copy_result(result) for result in state["manches"]],
    }
    if seat is not None:
        choice = state["choices"][seat]
        seen["my_choice"] = dict(choice) if choice else None
    return seen


def outcome(state: State) -> dict[str, Any] | None:
    """None while playing; else winners, cumulative scores and extras.

    Single manche: "le score le moins élevé remporte la partie", ties go to
    fewer cards left, then are shared. Several manches: lowest cumulative
    score, ties shared (RULES.md §1).
    """
    if state["phase"] != "over":
        return None
    manches = state["manches"]
    last = manches[-1]
    single = state["options"]["target_score"] is None
    return {
        "winners": winners(state["totals"], last["cards_left"] if single else None),
        "scores": list(state["totals"]),
        "cards_left": list(last["cards_left"]),
        "manche_scores": [list(m["scores"]) for m in manches],
        "manches": len(manches),
    }


def determinize(state: State, seat: Seat | None, rng: random.Random) -> State:
    """A new state that ``seat`` (None: a spectator) cannot tell from ``state``.

    Face-down cards are unknown to everyone, their owner included, so every
    face-down value and the reserve are one pool: the 100 cards minus those
    face up, in the centre or drawn from the reserve. The pool is dealt anew
    (from its sorted list, so the result depends only on what ``seat`` sees
    and on ``rng``); other seats' secret reveal choices become random
    face-down positions; the generator of later deals is reseeded.
    ``state`` is left untouched.
    """
    new: State = orjson.loads(orjson.dumps(state))
    cells = [
        (s, r, c)
        for s, face_up in enumerate(new["face_up"])
        for r in range(SIZE)
        for c in range(SIZE)
        if new["grids"][s][r][c] is not None and not face_up[r][c]
    ]
    pool = sorted([new["grids"][s][r][c] for s, r, c in cells] + new["reserve"])
    rng.shuffle(pool)
    for (s, r, c), value in zip(cells, pool, strict=False):
        new["grids"][s][r][c] = value
    new["reserve"] = pool[len(cells) :]
    for s, choice in enumerate(new["choices"]):
        if choice is not None and s != seat:
            row, col = rng.choice([(r, c) for t, r, c in cells if t == s])
            new["choices"][s] = {"row": row, "col": col}
    new["rng"] = rng.getrandbits(63)
    return new


def state_from_view(seen: dict[str, Any], seat: Seat | None, rng: random.Random) -> State:
    """A complete state consistent with ``seen``, ``view(state, seat)``
    after a JSON round trip, for a bot that only has its seat's view.

    Everything in the view is kept; the hidden cards (face-down cells and
    the reserve) are the 100 cards minus every value the view shows, which
    ``determinize`` then deals at random, along with the other seats'
    secret reveal choices and the seed of later deals. So
    ``view(state_from_view(view(s, seat), seat, rng), seat) == view(s, seat)``.
    Raises ValueError when the view cannot come from a real state.
    """
    n = seen["n_players"]
    players = seen["players"]
    unseen = Counter(_deck())
    unseen.subtract(seen["centre"])
    unseen.subtract(seen["reserve"]["drawn"])
    for player in players:
        unseen.subtract(
            cell["value"] for row in player["grid"] for cell in row if cell and cell["face_up"]
        )
    if any(count < 0 for count in unseen.values()):
        raise ValueError("the view shows more than 10 cards of one value")
    # Placeholders for the hidden cards: the right multiset in sorted order,
    # which determinize then shuffles.
    hidden = iter(sorted(unseen.elements()))
    grids = [
        [[_seen_cell(cell, hidden) for cell in row] for row in player["grid"]]
        for player in players
    ]
    reserve = [next(hidden, None) for _ in range(seen["reserve"]["count"])]
    if None in reserve or next(hidden, None) is not None:
        raise ValueError("the view's card counts do not add up to 100")
    first_player = seen["first_player"]
    # The first player of turn t is the manche's starter moved t - 1 seats on.
    starter = None if first_player is None else (first_player - seen["turn"] + 1) % n
    # The first_player option is used only to decide turn 1 of the first
    # manche: a first player known before that reveal was fixed at setup.
    undecided = seen["manche"] == 1 and seen["turn"] == 1 and seen["phase"] == "reveal"
    rule = starter if undecided and starter is not None else "lowest_card"
    my_choice = seen.get("my_choice")
    choices = [
        # Another seat's choice is unknown: any face-down cell, which
        # determinize redraws.
        (dict(my_choice) if s == seat else _any_face_down(grids[s], players[s]["grid"]))
        if player["chosen"]
        else None
        for s, player in enumerate(players)
    ]
    skeleton: State = {
        "n_players": n,
        "options": {"target_score": seen["target_score"], "first_player": rule},
        "rng": 0,
        "manche": seen["manche"],
        "turn": seen["turn"],
        "phase": seen["phase"],
        "starter": starter,
        "first_player": first_player,
        "current": seen["current"],
        "grids": grids,
        "face_up": [
            [[bool(cell and cell["face_up"]) for cell in row] for row in player["grid"]]
            for player in players
        ],
        "holes": [dict(player["hole"]) if player["hole"] else None for player in players],
        "choices": choices,
        "centre": list(seen["centre"]),
        "reserve": reserve,
        "reserve_drawn": list(seen["reserve"]["drawn"]),
        "totals": [player["total"] for player in players],
        "manches": [_copy_result(result) for result in seen["manches"]],
    }
    return determinize(skeleton, seat, rng)


# -- private helpers -------------------------------------------------------


def _checked_options(options: dict[str, Any], n_players: int) -> tuple[int | None, Any]:
    if not isinstance(n_players, int) or not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise IllegalAction(
            "invalid_options", f"Dékal is played by {MIN_PLAYERS} to {MAX_PLAYERS} players"
        )
    target = options.get("target_score")
    first = options.get("first_player", "lowest_card")
    if target is not None and (not _is_int(target) or not 1 <= target <= MAX_TARGET_SCORE):
        raise IllegalAction(
            "invalid_options", f"target_score must be 1..{MAX_TARGET_SCORE} or null"
        )
    if first not in FIRST_PLAYER_RULES and not (_is_int(first) and 0 <= first < n_players):
        raise IllegalAction(
            "invalid_options",
            f"first_player must be 'lowest_card', 'random' or a seat 0..{n_players - 1}",
        )
    return target, first


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _deck() -> list[int]:
    return [value for value in VALUES for _ in range(COPIES)]


def _deal(state: State, deck: list[int]) -> None:
    """Lay 16 face-down cards per grid; the rest is the reserve."""
    n = state["n_players"]
    state["grids"] = [
        [deck[16 * s + SIZE * r : 16 * s + SIZE * (r + 1)] for r in range(SIZE)] for s in range(n)
    ]
    state["face_up"] = [[[False] * SIZE for _ in range(SIZE)] for _ in range(n)]
    state["reserve"] = deck[CELLS * n :]
    state["reserve_drawn"] = []


def _checked_reveal(state: State, seat: Seat, action: Action) -> Position:
    row, col = action.get("row"), action.get("col")
    if not (_is_int(row) and _is_int(col) and 0 <= row < SIZE and 0 <= col < SIZE):
        raise IllegalAction("illegal_action", "row and col must be 0..3")
    if state["face_up"][seat][row][col]:
        raise IllegalAction("illegal_action", f"the card at ({row}, {col}) is already face up")
    return {"row": row, "col": col}


def _checked_take(state: State, seat: Seat, action: Action) -> tuple[int, str]:
    value, direction = action.get("value"), action.get("from")
    if not _is_int(value) or value not in state["centre"]:
        raise IllegalAction("illegal_action", f"there is no {value!r} in the centre")
    if direction not in DIRECTIONS:
        raise IllegalAction("illegal_action", f"'from' must be one of {', '.join(DIRECTIONS)}")
    if direction not in legal_directions(state["holes"][seat]):
        raise IllegalAction(
            "illegal_action",
            f"the hole is on the {direction} edge: the card may not drop straight into it",
        )
    return value, direction


def _choose(state: State, seat: Seat, position: Position) -> list[Event]:
    """Record a secret choice; reveal everything once every seat has chosen."""
    state["choices"][seat] = position
    events: list[Event] = [{"type": "chosen", "seat": seat}]
    if all(state["choices"]):
        events.extend(_reveal(state))
    return events


def _reveal(state: State) -> list[Event]:
    """Turn every chosen card face up into the centre, leaving holes."""
    cards = []
    for s, position in enumerate(state["choices"]):
        row, col = position["row"], position["col"]
        value = state["grids"][s][row][col]
        state["grids"][s][row][col] = None
        state["holes"][s] = position
        state["centre"].append(value)
        cards.append({"seat": s, "row": row, "col": col, "value": value})
    state["choices"] = [None] * state["n_players"]
    state["centre"].sort()
    events: list[Event] = [
        {"type": "revealed", "manche": state["manche"], "turn": state["turn"], "cards": cards}
    ]
    if state["first_player"] is None:
        events.extend(_decide_first_player(state, [card["value"] for card in cards]))
    state["phase"] = "draft"
    state["current"] = state["first_player"]
    return events


def _decide_first_player(state: State, revealed: list[int]) -> list[Event]:
    """Turn 1: "la carte révélée avec la plus faible valeur détermine qui
    commence. En cas d'égalité, départagez-vous en piochant une carte parmi
    celles écartées en début de partie." Lowest draw wins, repeated among
    those still tied; random when the reserve cannot serve them all.
    """
    low = min(revealed)
    tied = [s for s, value in enumerate(revealed) if value == low]
    events: list[Event] = []
    how = "lowest_card"
    while len(tied) > 1 and len(state["reserve"]) >= len(tied):
        draws = [{"seat": s, "value": state["reserve"].pop()} for s in tied]
        state["reserve_drawn"].extend(draw["value"] for draw in draws)
        events.append({"type": "reserve_drawn", "draws": draws})
        low = min(draw["value"] for draw in draws)
        tied = [draw["seat"] for draw in draws if draw["value"] == low]
        how = "reserve"
    if len(tied) > 1:
        with seeded_rng(state) as rng:
            tied = [rng.choice(tied)]
        how = "random"
    state["starter"] = state["first_player"] = tied[0]
    events.append({"type": "first_player", "seat": tied[0], "by": how})
    return events


def _take(state: State, seat: Seat, value: int, direction: str) -> list[Event]:
    """Take ``value`` from the centre and push it into the hole's line."""
    hole = state["holes"][seat]
    state["centre"].remove(value)
    _push(state["grids"][seat], state["face_up"][seat], hole, direction, value)
    state["holes"][seat] = None
    events: list[Event] = [
        {"type": "taken", "seat": seat, "value": value, "from": direction, "hole": dict(hole)}
    ]
    if state["centre"]:
        state["current"] = (seat + 1) % state["n_players"]
        return events
    if state["turn"] < TURNS:
        return events + _next_turn(state)
    return events + _end_manche(state)


def _push(grid: Grid, face_up: Grid, hole: Position, direction: str, value: int) -> None:
    """Shift the cards between the entry edge and the hole one step toward
    the hole; the new card, face up, takes the edge cell. Pushed cards keep
    their face."""
    line = _line(hole, direction)
    for (r, c), (pr, pc) in zip(reversed(line[1:]), reversed(line[:-1]), strict=True):
        grid[r][c] = grid[pr][pc]
        face_up[r][c] = face_up[pr][pc]
    r, c = line[0]
    grid[r][c] = value
    face_up[r][c] = True


def _line(hole: Position, direction: str) -> list[tuple[int, int]]:
    """The cells from the entry edge to the hole, edge first."""
    row, col = hole["row"], hole["col"]
    if direction == "left":
        return [(row, c) for c in range(0, col + 1)]
    if direction == "right":
        return [(row, c) for c in range(SIZE - 1, col - 1, -1)]
    if direction == "top":
        return [(r, col) for r in range(0, row + 1)]
    return [(r, col) for r in range(SIZE - 1, row - 1, -1)]


def _next_turn(state: State) -> list[Event]:
    """ "Le pion Premier Joueur passe alors au voisin" and a new turn starts."""
    state["turn"] += 1
    state["first_player"] = (state["first_player"] + 1) % state["n_players"]
    state["phase"] = "reveal"
    state["current"] = None
    return [
        {
            "type": "turn_started",
            "manche": state["manche"],
            "turn": state["turn"],
            "first_player": state["first_player"],
        }
    ]


def _end_manche(state: State) -> list[Event]:
    """Score every grid; then end the match or deal the next manche."""
    n = state["n_players"]
    results = [score_grid(grid) for grid in state["grids"]]
    scores = [result["score"] for result in results]
    for s in range(n):
        state["totals"][s] += scores[s]
    record = {
        "manche": state["manche"],
        "first_player": state["starter"],
        "scores": scores,
        "cards_left": [result["cards_left"] for result in results],
        "cancelled": [result["cancelled"] for result in results],
        "totals": list(state["totals"]),
    }
    state["manches"].append(record)
    events: list[Event] = [
        {"type": "manche_scored", "grids": [[list(row) for row in g] for g in state["grids"]]}
        | _copy_result(record)
    ]
    target = state["options"]["target_score"]
    if target is None or max(state["totals"]) >= target:
        state["phase"] = "over"
        state["current"] = None
        return [*events, {"type": "match_over", **outcome(state)}]
    return events + _next_manche(state)


def _next_manche(state: State) -> list[Event]:
    """Reshuffle all 100 cards; "changez de Premier Joueur au début de
    chaque partie": the seat after the previous manche's first player."""
    n = state["n_players"]
    state["manche"] += 1
    state["turn"] = 1
    state["phase"] = "reveal"
    state["current"] = None
    state["centre"] = []
    state["starter"] = state["first_player"] = (state["starter"] + 1) % n
    with seeded_rng(state) as rng:
        _deal(state, rng.sample(_deck(), DECK_SIZE))
    return [
        {"type": "manche_started", "manche": state["manche"], "first_player": state["starter"]}
    ]


def _player_view(state: State, seat: Seat) -> dict[str, Any]:
    grid, face_up = state["grids"][seat], state["face_up"][seat]
    hole = state["holes"][seat]
    cells = [
        [
            {"face_up": face_up[r][c], "value": grid[r][c] if face_up[r][c] else None}
            if grid[r][c] is not None
            else None
            for c in range(SIZE)
        ]
        for r in range(SIZE)
    ]
    return {
        "seat": seat,
        "grid": cells,
        "hole": dict(hole) if hole else None,
        "chosen": state["choices"][seat] is not None,
        "total": state["totals"][seat],
    }


def _copy_result(result: dict[str, Any]) -> dict[str, Any]:
    return {
        "manche": result["manche"],
        "first_player": result["first_player"],
        "scores": list(result["scores"]),
        "cards_left": list(result["cards_left"]),
        "cancelled": [[dict(p) for p in cells] for cells in result["cancelled"]],
        "totals": list(result["totals"]),
    }


def _neighbours(row: int, col: int) -> list[tuple[int, int]]:
    candidates = ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1))
    return [(r, c) for r, c in candidates if 0 <= r < SIZE and 0 <= c < SIZE]


def _seen_cell(cell: dict[str, Any] | None, hidden: Iterator[int]) -> int | None:
    """A state cell from a view cell: a hole, a face-up value or the next
    hidden card."""
    if cell is None:
        return None
    if cell["face_up"]:
        return cell["value"]
    value = next(hidden, None)
    if value is None:
        raise ValueError("the view's card counts do not add up to 100")
    return value


def _any_face_down(grid: Grid, cells: list[list[Any]]) -> Position:
    for r in range(SIZE):
        for c in range(SIZE):
            if grid[r][c] is not None and not cells[r][c]["face_up"]:
                return {"row": r, "col": c}
    raise ValueError("a seat has chosen but has no face-down card")
