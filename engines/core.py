"""The engine contract shared by every game, and the helpers they all use.

An engine is pure rules: no Flask, no Redis, no I/O. A match state is a plain
JSON-serialisable dict that holds everything, hidden information and the
random generator's seed included, so that ``(game, options, seed, actions)``
always replays to the same state.

Each game module exposes one object satisfying :class:`Game`; the registry in
``engines/__init__.py`` maps names to those objects.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from marshmallow import Schema, fields

State = dict[str, Any]
Action = dict[str, Any]
Event = dict[str, Any]
Seat = int


class IllegalAction(Exception):
    """A well-formed action that the rules refuse. ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Game(Protocol):
    """What every engine provides.

    Events returned by ``apply`` are dicts with a ``type``. An event that only
    some seats may see carries ``"to": [seats]``; the service shows it to those
    seats alone (never to spectators) and strips ``to``. Events without ``to``
    are public and must carry no hidden information. The action that ends
    the match ends its events with ``{"type": "match_over", ...outcome}``.
    """

    name: str  # the API name: "dekal"
    title: str  # human title: "Dékal"
    min_players: int
    max_players: int
    options_schema: type[Schema]  # loads and validates the options (defaults filled)
    action_schemas: dict[str, type[Schema]]  # action "type" -> schema of that action
    view_schema: type[Schema]  # documents view(); used in the OpenAPI contract
    outcome_schema: type[Schema]  # documents outcome()
    event_schemas: dict[str, type[Schema]]  # event "type" -> schema of that event

    def setup(self, options: dict[str, Any], n_players: int, seed: int) -> State:
        """A new match. ``options`` were loaded by ``options_schema``."""
        ...

    def to_act(self, state: State) -> list[Seat]:
        """Who may act now (several seats in a simultaneous phase); [] when over."""
        ...

    def legal_actions(self, state: State, seat: Seat) -> list[Action]:
        """Every legal action of ``seat`` now, each exactly as ``apply`` takes it."""
        ...

    def apply(self, state: State, seat: Seat, action: Action) -> list[Event]:
        """Check then play ``action``, mutating ``state``; return the events.

        Raises IllegalAction (leaving ``state`` untouched) when refused.
        ``action`` has been loaded by ``action_schemas[action["type"]]``.
        """
        ...

    def view(self, state: State, seat: Seat | None) -> dict[str, Any]:
        """What ``seat`` (None: a spectator) may see, and nothing more."""
        ...

    def outcome(self, state: State) -> dict[str, Any] | None:
        """None while the match goes on; else at least ``winners`` and ``scores``."""
        ...


# The metadata key naming a field's value type (a card, a tile...): the
# contract makes each value type one named component, so that a generated
# client has one type for a card read from a view and put into an action.
VALUE_TYPE = "x-value-type"


def named(name: str, field: fields.Field) -> fields.Field:
    """``field``, marked as the game's value type ``name`` (e.g. ``"DucaleCard"``)."""
    field.metadata = {**field.metadata, VALUE_TYPE: name}
    return field


@contextmanager
def seeded_rng(state: State) -> Iterator[random.Random]:
    """A generator drawn from ``state["rng"]``, which is advanced on exit.

    Keeping one integer instead of ``Random.getstate()`` keeps states small
    while every draw stays a pure function of the state.
    """
    rng = random.Random(state["rng"])
    yield rng
    state["rng"] = rng.getrandbits(63)


def visible_to(event: Event, seat: Seat | None) -> bool:
    """Whether ``seat`` (None: a spectator) may see ``event``."""
    to = event.get("to")
    return to is None or (seat is not None and seat in to)


def redact_events(events: list[Event], seat: Seat | None) -> list[Event]:
    """The events ``seat`` may see, without their ``to`` field."""
    return [{k: v for k, v in e.items() if k != "to"} for e in events if visible_to(e, seat)]


def check_legal(game: Game, state: State, seat: Seat, action: Action) -> None:
    """Raise IllegalAction unless ``action`` is one of ``seat``'s legal actions.

    A generic, slow check; engines may validate more directly.
    """
    if seat not in game.to_act(state):
        raise IllegalAction("not_your_turn", "it is not this seat's turn")
    if action not in game.legal_actions(state, seat):
        raise IllegalAction("illegal_action", "this action is not legal now")


def clone(state: State) -> State:
    """A deep copy of a state (for search and tests)."""
    return copy.deepcopy(state)
