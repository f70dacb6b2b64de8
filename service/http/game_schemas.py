"""Each game's part of the contract, built from what its engine declares:
its options, create-body, match, action, legal-actions, outcome, record
and replay schemas, registered as components named after the game."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from flask_smorest import Api
from marshmallow import Schema, fields, validate

from engines.core import Game
from service.http.contract import REF, event_components
from service.http.schemas import (
    RANKING,
    RESIGNED,
    TURN_TIMEOUT,
    CreateMatchSchema,
    EndedEarlyOutcomeSchema,
    MatchSchema,
    RecordSchema,
    ReplaySchema,
    RevealedSchema,
)


@dataclass(frozen=True)
class GameContract:
    """What every route of one game's blueprint needs: the game, its
    schemas and the names of its components in the spec."""

    game: Game
    names: dict[str, str]
    options: type[Schema]
    create: type[Schema]
    match: type[Schema]
    loaders: dict[str, Schema]

    @property
    def ref(self) -> dict[str, dict[str, str]]:
        return {k: {"$ref": f"#/components/schemas/{v}"} for k, v in self.names.items()}


def game_contract(api: Api, game: Game) -> GameContract:
    """Register ``game``'s schemas in the spec; return what its routes use."""
    names = game_components(api, game)
    options, create, match = game_schemas(game)
    loaders = {kind: schema() for kind, schema in game.action_schemas.items()}
    return GameContract(game, names, options, create, match, loaders)


def schema_name(schema: type[Schema]) -> str:
    return schema.__name__.removesuffix("Schema")


def game_components(api: Api, game: Game) -> dict[str, str]:
    """Register ``game``'s schemas in the spec; return the names of its components."""
    prefix = game.name.capitalize()
    spec = api.spec
    action_refs = {}
    for kind, schema in sorted(game.action_schemas.items()):
        name = schema_name(schema)
        if name not in spec.components.schemas:
            spec.components.schema(name, schema=schema)
        action_refs[kind] = f"#/components/schemas/{name}"
    action = f"{prefix}Action"
    spec.components.schema(
        action,
        {
            "oneOf": [{"$ref": ref} for ref in action_refs.values()],
            "discriminator": {"propertyName": "type", "mapping": action_refs},
        },
    )
    spec.components.schema(
        f"{prefix}LegalActions",
        {
            "type": "object",
            "required": ["version", "seat", "actions"],
            "properties": {
                "version": {"type": "integer"},
                "seat": {"type": "integer"},
                "actions": {"type": "array", "items": {"$ref": f"#/components/schemas/{action}"}},
            },
        },
    )
    events = event_components(spec, game, action)
    return {
        "action": action,
        "legal_actions": f"{prefix}LegalActions",
        "event": events,
        "events": f"{events}s",
    }


@functools.cache
def game_schemas(game: Game) -> tuple[type[Schema], type[Schema], type[Schema]]:
    """The match options, create-body and match schemas of ``game``, named after it."""
    prefix = game.name.capitalize()
    options = type(
        f"{prefix}MatchOptionsSchema", (game.options_schema,), {"turn_timeout_s": TURN_TIMEOUT}
    )
    players = CreateMatchSchema._declared_fields["players"]
    create = type(
        f"{prefix}CreateMatchSchema",
        (CreateMatchSchema,),
        {
            "options": fields.Nested(options),
            "players": fields.List(
                players.inner,
                required=True,
                validate=validate.Length(min=game.min_players, max=game.max_players),
                metadata=players.metadata,
            ),
        },
    )
    match = type(
        f"{prefix}MatchSchema",
        (MatchSchema,),
        {
            "options": fields.Nested(options, required=True),
            "view": fields.Nested(game.view_schema, required=True),
            "outcome": outcome_field(game),
            "legal_actions": fields.List(
                fields.Raw(metadata={REF: f"{prefix}Action"}),
                metadata={
                    "description": "Only with ?legal_actions=true: every action the caller's "
                    "seat may play now, each exactly as POST .../actions takes it (empty when "
                    "it is not to act, and for a spectator)."
                },
            ),
        },
    )
    return options, create, match


@functools.cache
def record_schema(game: Game) -> type[Schema]:
    """The record of a finished ``game`` match, its actions typed as the game's."""
    prefix = game.name.capitalize()
    action = {"allOf": [{"$ref": f"#/components/schemas/{prefix}Action"}]}
    step = type(
        f"{prefix}RecordActionSchema",
        (Schema,),
        {
            "seat": fields.Integer(required=True),
            "action": fields.Raw(required=True, metadata=action),
            "timed_out": fields.Boolean(
                required=True,
                metadata={
                    "description": "the seat's turn clock ran out: the server played this "
                    "action for it"
                },
            ),
            "events": fields.List(
                fields.Dict(),
                required=True,
                metadata={"description": "the public events the action caused, as in the log"},
            ),
        },
    )
    return type(
        f"{prefix}RecordSchema",
        (RecordSchema,),
        {
            "options": fields.Nested(game.options_schema, required=True),
            "actions": fields.List(
                fields.Nested(step),
                required=True,
                metadata={"description": "every accepted action, in order, with its seat"},
            ),
            "outcome": outcome_field(game, required_value=True),
            "final_view": fields.Nested(
                game.view_schema,
                required=True,
                metadata={"description": "what a spectator sees at the end"},
            ),
        },
    )


@functools.cache
def replay_schema(game: Game) -> type[Schema]:
    """A finished ``game`` match step by step: each step's view is the game's
    spectator view, each hand the game's view of one seat at the end."""
    prefix = game.name.capitalize()
    action = {"oneOf": [{"$ref": f"#/components/schemas/{prefix}Action"}, {"type": "null"}]}
    step = type(
        f"{prefix}ReplayStepSchema",
        (Schema,),
        {
            "index": fields.Integer(
                required=True, metadata={"description": "0: the start; k: after the k-th action"}
            ),
            "seat": fields.Integer(
                allow_none=True,
                required=True,
                metadata={"description": "the seat that acted (null at step 0)"},
            ),
            "action": fields.Raw(
                allow_none=True,
                required=True,
                metadata={"description": "the action, as the record has it (null at step 0)"}
                | action,
            ),
            "events": fields.List(
                fields.Dict(),
                required=True,
                metadata={"description": "the public events the action caused, as in the record"},
            ),
            "view": fields.Nested(
                game.view_schema,
                required=True,
                metadata={"description": "what a spectator saw after this step"},
            ),
        },
    )
    return type(
        f"{prefix}ReplaySchema",
        (ReplaySchema,),
        {
            "steps": fields.List(
                fields.Nested(step),
                required=True,
                metadata={
                    "description": "this page's steps, in order: of the whole replay, the "
                    "start, then one step per action of the record"
                },
            ),
            "hands": fields.List(
                fields.Nested(game.view_schema),
                allow_none=True,
                required=True,
                metadata={
                    "description": "on the last page (null on the others): per seat, in seat "
                    "order, what that seat saw at the end, every hand revealed once the match "
                    "is over"
                },
            ),
            "outcome": outcome_field(game, required_value=True),
        },
    )


@functools.cache
def ranked_outcome_schema(game: Game) -> type[Schema]:
    """The game's outcome, plus what a resignation adds to it."""
    return type(
        f"{game.name.capitalize()}MatchOutcomeSchema",
        (game.outcome_schema, RevealedSchema),
        {"resigned": RESIGNED, "ranking": RANKING},
    )


def outcome_name(game: Game) -> str:
    return f"{game.name.capitalize()}MatchOutcome"


def outcome_field(game: Game, required_value: bool = False) -> fields.Field:
    """A match's outcome: the game's own (with resigned seats ranked last),
    or, for a match ended by resignation or abort, the service's; null while
    the match goes on (unless ``required_value``: a record's, always there)."""
    null = [] if required_value else [{"type": "null"}]
    return fields.Raw(
        allow_none=not required_value,
        required=True,
        metadata={
            "description": "null until the end; the game's outcome, or EndedEarlyOutcome when "
            "the match ended by resignation or abort",
            "oneOf": [
                {"$ref": f"#/components/schemas/{outcome_name(game)}"},
                {"$ref": "#/components/schemas/EndedEarlyOutcome"},
                *null,
            ],
        },
    )


def register_components(api: Api) -> None:
    """The schemas every game's lifecycle routes refer to (their events are
    among every game's, ``service.http.contract.SERVICE_EVENTS``)."""
    api.spec.components.schema("EndedEarlyOutcome", schema=EndedEarlyOutcomeSchema)
