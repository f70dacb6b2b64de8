"""A match's life around its play: ``/v1/games/G/matches/{id}/resign``,
``.../abort`` and ``.../rematch`` (``service/domain/lifecycle.py``); leaving a
seat is ``DELETE`` on the seat (``service/http/seats.py``)."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from flask.views import MethodView

from service.domain import lifecycle as lifecycle_ops
from service.http.answers import SEAT_TOKEN, json_response, matches, required_token
from service.http.arguments import Blueprint
from service.http.game_schemas import GameContract
from service.http.schemas import RematchSchema

# Refusals: each a 409 with its own stable code; nothing is written.
REFUSALS = {
    "leave": "Not now: match_started (leave only before the start), match_over, seeded_match, "
    "conflict",
    "resign": "Not now: match_not_started, match_over, seat_resigned, conflict",
    "abort": "Not now: abort_too_late (a seat has acted), rated_match (resign instead), "
    "match_over, conflict",
    "rematch": "Not now: match_not_over, rematch_already_accepted, conflict",
}


def refusals(kind: str, *statuses: int) -> dict[str, Any]:
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


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name

    @blp.route("/matches/<match_id>/resign")
    class Resign(MethodView):
        @blp.response(200, contract.match)
        @blp.doc(
            operationId=f"{name}_resign",
            security=SEAT_TOKEN,
            **refusals("resign", 401, 403, 404, 409, 503),
        )
        def post(self, match_id: str) -> Response:
            """Resign, whoever is to act: ranked last. With two seats (or one
            left in) the match ends and the other seat wins; with more, a
            `greedy` bot plays your seat to the end."""
            token = required_token()
            return json_response(
                lifecycle_ops.resign(matches(), game, match_id, token, request.remote_addr)
            )

    @blp.route("/matches/<match_id>/abort")
    class Abort(MethodView):
        @blp.response(200, contract.match)
        @blp.doc(
            operationId=f"{name}_abort",
            security=SEAT_TOKEN,
            **refusals("abort", 401, 403, 404, 409, 503),
        )
        def post(self, match_id: str) -> Response:
            """Call the match off while nobody but bots has acted: it ends with
            no winner (`outcome.ended_by` is `abort`)."""
            token = required_token()
            return json_response(lifecycle_ops.abort(matches(), game, match_id, token))

    @blp.route("/matches/<match_id>/rematch")
    class Rematch(MethodView):
        @blp.response(201, RematchSchema)
        @blp.doc(
            operationId=f"{name}_rematch",
            security=SEAT_TOKEN,
            **refusals("rematch", 401, 403, 404, 409, 429, 503),
        )
        def post(self, match_id: str) -> Response:
            """After the end, offer a rematch (the first seat to ask) or accept
            the one on offer: same game and options, seats rotated by one. The
            answer holds your seat and its token in the new match, shown once;
            it starts when every seat has accepted (bots accept at once)."""
            token = required_token()
            taken = lifecycle_ops.rematch(matches(), game, match_id, token, request.remote_addr)
            return json_response(taken, 201)
