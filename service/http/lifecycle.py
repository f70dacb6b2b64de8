"""The routes of a match's life around its play: leave, resign, abort,
rematch (``service/domain/lifecycle.py``), and their part of the contract."""

from __future__ import annotations

import functools
from typing import Any

from flask import Response, request
from flask.views import MethodView
from flask_smorest import Api, Blueprint
from marshmallow import Schema, fields

from engines.core import Game
from service.domain import lifecycle as lifecycle_ops
from service.http import api as v1  # the routes' shared helpers (imported while it loads us)
from service.http.schemas import (
    RANKING,
    RESIGNED,
    EndedEarlyOutcomeSchema,
    RematchSchema,
    RevealedSchema,
)

# Refusals: each a 409 with its own stable code; nothing is written.
REFUSALS = {
    "leave": "Not now: match_started (leave only before the start), match_over, seeded_match, "
    "conflict",
    "resign": "Not now: match_not_started, match_over, seat_resigned, conflict",
    "abort": "Not now: abort_too_late (a seat has acted), match_over, conflict",
    "rematch": "Not now: match_not_over, rematch_already_accepted, conflict",
}


def _problems(kind: str, *statuses: int) -> dict[str, Any]:
    described = {
        401: "Token missing or malformed (token_required)",
        403: "Token holds no seat here (invalid_token), or another seat (not_your_seat); "
        "abort: the seat was taken by joining, not given at creation (not_creator)",
        404: "Unknown game or match (match_not_found)",
        409: REFUSALS[kind],
        429: "A quota of the caller's address: too_many_matches_created, "
        "too_many_waiting_matches, bot_seats_exceeded (the rematch is a new match)",
        503: "The store is unavailable (store_unavailable)",
    }
    problem = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    return {
        "responses": {str(s): {"description": described[s], "content": problem} for s in statuses}
    }


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


def add_routes(api: Api, blp: Blueprint, game: Game, match_schema: type[Schema]) -> None:
    name = game.name
    api.spec.components.schema(outcome_name(game), schema=ranked_outcome_schema(game))
    security = [{"seatToken": []}]

    matches, answer, required_token = v1.matches, v1.json_response, v1.required_token

    @blp.route("/matches/<match_id>/seats/<int:seat>", endpoint="leave")
    class SeatLeave(MethodView):
        @blp.response(200, match_schema)
        @blp.doc(
            operationId=f"{name}_leave_seat",
            security=security,
            **_problems("leave", 401, 403, 404, 409, 503),
        )
        def delete(self, match_id: str, seat: int) -> Response:
            """Give your seat back before the match starts: your token stops
            working and the seat is open again (listed again if the match is
            listed). The answer is the match as a spectator sees it."""
            token = required_token()
            return answer(lifecycle_ops.leave(matches(), game, match_id, seat, token))

    @blp.route("/matches/<match_id>/resign")
    class Resign(MethodView):
        @blp.response(200, match_schema)
        @blp.doc(
            operationId=f"{name}_resign",
            security=security,
            **_problems("resign", 401, 403, 404, 409, 503),
        )
        def post(self, match_id: str) -> Response:
            """Resign, whoever is to act: ranked last. With two seats (or one
            left in) the match ends and the other seat wins; with more, a
            `greedy` bot plays your seat to the end."""
            token = required_token()
            return answer(
                lifecycle_ops.resign(matches(), game, match_id, token, request.remote_addr)
            )

    @blp.route("/matches/<match_id>/abort")
    class Abort(MethodView):
        @blp.response(200, match_schema)
        @blp.doc(
            operationId=f"{name}_abort",
            security=security,
            **_problems("abort", 401, 403, 404, 409, 503),
        )
        def post(self, match_id: str) -> Response:
            """Call the match off while nobody but bots has acted: it ends with
            no winner (`outcome.ended_by` is `abort`)."""
            token = required_token()
            return answer(lifecycle_ops.abort(matches(), game, match_id, token))

    @blp.route("/matches/<match_id>/rematch")
    class Rematch(MethodView):
        @blp.response(201, RematchSchema)
        @blp.doc(
            operationId=f"{name}_rematch",
            security=security,
            **_problems("rematch", 401, 403, 404, 409, 429, 503),
        )
        def post(self, match_id: str) -> Response:
            """After the end, offer a rematch (the first seat to ask) or accept
            the one on offer: same game and options, seats rotated by one. The
            answer holds your seat and its token in the new match, shown once;
            it starts when every seat has accepted (bots accept at once)."""
            token = required_token()
            taken = lifecycle_ops.rematch(matches(), game, match_id, token, request.remote_addr)
            return answer(taken, 201)
