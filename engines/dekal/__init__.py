"""Dékal: the engine object the registry holds (rules in ``rules.py``)."""

from __future__ import annotations

from typing import ClassVar

from marshmallow import Schema

from engines.dekal import bots, rules, schemas


class DekalGame:
    """Dékal for 2 to 6 players, satisfying :class:`engines.core.Game`."""

    name = rules.NAME
    title = rules.TITLE
    min_players = rules.MIN_PLAYERS
    max_players = rules.MAX_PLAYERS
    options_schema = schemas.DekalOptionsSchema
    action_schemas: ClassVar[dict[str, type[Schema]]] = {
        "reveal": schemas.DekalRevealActionSchema,
        "take": schemas.DekalTakeActionSchema,
    }
    view_schema = schemas.DekalViewSchema
    outcome_schema = schemas.DekalOutcomeSchema
    event_schemas = schemas.EVENT_SCHEMAS

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
    rollout_action = staticmethod(bots.rollout_action)
    playout_value = staticmethod(bots.playout_value)


GAME = DekalGame()

__all__ = ["GAME", "DekalGame"]
