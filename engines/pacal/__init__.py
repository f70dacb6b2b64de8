"""Pacal (RULES.md §2): the two-player match and the solitaire."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema

from engines.core import Action, Event, Seat, State
from engines.pacal import rules, schemas


class PacalGame:
    """The engine object registered under ``pacal``."""

    name = rules.NAME
    title = rules.TITLE
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    options_schema: type[Schema] = schemas.PacalOptionsSchema
    action_schemas: dict[str, type[Schema]] = schemas.ACTION_SCHEMAS
    view_schema: type[Schema] = schemas.PacalViewSchema
    outcome_schema: type[Schema] = schemas.PacalOutcomeSchema

    def setup(self, options: dict[str, Any], n_players: int, seed: int) -> State:
        return rules.setup(options, n_players, seed)

    def to_act(self, state: State) -> list[Seat]:
        return rules.to_act(state)

    def legal_actions(self, state: State, seat: Seat) -> list[Action]:
        return rules.legal_actions(state, seat)

    def apply(self, state: State, seat: Seat, action: Action) -> list[Event]:
        return rules.apply(state, seat, action)

    def view(self, state: State, seat: Seat | None) -> dict[str, Any]:
        return rules.view(state, seat)

    def outcome(self, state: State) -> dict[str, Any] | None:
        return rules.outcome(state)


GAME = PacalGame()

__all__ = ["GAME", "PacalGame"]
