"""Pacal (RULES.md §2): the two-player match and the solitaire."""

from __future__ import annotations

from marshmallow import Schema

from engines.pacal import bots, rules, schemas


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
    event_schemas: dict[str, type[Schema]] = schemas.EVENT_SCHEMAS

    setup = staticmethod(rules.setup)
    to_act = staticmethod(rules.to_act)
    legal_actions = staticmethod(rules.legal_actions)
    apply = staticmethod(rules.apply)
    view = staticmethod(rules.view)
    outcome = staticmethod(rules.outcome)

    # The bots (engines/ai): what a seat cannot see, resampled; the game's
    # own heuristics and search hooks.
    determinize = staticmethod(rules.determinize)
    state_from_view = staticmethod(rules.state_from_view)
    evaluate = staticmethod(bots.evaluate)
    greedy = staticmethod(bots.greedy)
    search_actions = staticmethod(bots.search_actions)
    rollout_action = staticmethod(bots.rollout_action)
    playout_value = staticmethod(bots.playout_value)
    playout = staticmethod(bots.playout)


GAME = PacalGame()

__all__ = ["GAME", "PacalGame"]
