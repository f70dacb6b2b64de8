"""Dékal: the engine object the registry holds (rules in ``rules.py``)."""

from __future__ import annotations

from typing import ClassVar

from marshmallow import Schema

from engines.dekal import rules, schemas


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

    setup = staticmethod(rules.setup)
    to_act = staticmethod(rules.to_act)
    legal_actions = staticmethod(rules.legal_actions)
    apply = staticmethod(rules.apply)
    view = staticmethod(rules.view)
    outcome = staticmethod(rules.outcome)


GAME = DekalGame()

__all__ = ["GAME", "DekalGame"]
