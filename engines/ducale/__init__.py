"""Ducale, the French rummy: the engine (RULES.md §4).

``GAME`` binds the rules (``rules.py``, melds in ``melds.py``) and the wire
schemas (``schemas.py``) into one object satisfying :class:`engines.core.Game`.
"""

from __future__ import annotations

from marshmallow import Schema

from engines.ducale import bots, rules, schemas


class DucaleGame:
    """Ducale rummy, 2 to 6 players."""

    name = rules.NAME
    title = rules.TITLE
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    options_schema: type[Schema] = schemas.DucaleOptionsSchema
    action_schemas: dict[str, type[Schema]] = schemas.ACTION_SCHEMAS
    view_schema: type[Schema] = schemas.DucaleViewSchema
    outcome_schema: type[Schema] = schemas.DucaleOutcomeSchema
    # What ``ludotheque arena`` plays with: matches between bots must end.
    arena_options = rules.ARENA_OPTIONS
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


GAME = DucaleGame()

__all__ = ["GAME", "DucaleGame"]
