"""A seat: ``/v1/games/G/matches/{id}/seats/{seat}``: ``POST`` takes it,
``DELETE`` gives it back before the start."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from flask.views import MethodView

from service.domain import lifecycle as lifecycle_ops
from service.domain.problems import Problem
from service.http.answers import SEAT_TOKEN, json_response, matches, problems, required_token
from service.http.arguments import Blueprint
from service.http.credentials import credential
from service.http.game_schemas import GameContract
from service.http.lifecycle import refusals
from service.http.players import seat_player
from service.http.schemas import JoinedSchema, JoinSchema


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name

    @blp.route("/matches/<match_id>/seats/<int:seat>")
    class SeatResource(MethodView):
        @blp.arguments(JoinSchema())
        @blp.response(201, JoinedSchema)
        @blp.doc(
            operationId=f"{name}_join_match",
            **problems(400, 401, 403, 404, 409, 413, 422, 429, 503),
        )
        def post(self, body: dict[str, Any], match_id: str, seat: int) -> Response:
            """Take an open seat, for yourself (the answer holds its token,
            shown once), for your player (with a player token: the player's
            tokens hold it) or for a bot. The match starts when every seat is taken."""
            player = None
            if "bot" not in body and credential() is not None:
                player = seat_player("me")
            elif "name" not in body and "bot" not in body:
                raise Problem(
                    422,
                    "invalid_request",
                    "give a name or a bot (or neither, with a player token)",
                )
            taken = matches().join(
                game,
                match_id,
                seat,
                body.get("name"),
                body.get("bot"),
                request.remote_addr,
                player=player,
            )
            return json_response(taken, 201)

    @blp.route("/matches/<match_id>/seats/<int:seat>", endpoint="leave")
    class SeatLeave(MethodView):
        @blp.response(200, contract.match)
        @blp.doc(
            operationId=f"{name}_leave_seat",
            security=SEAT_TOKEN,
            **refusals("leave", 401, 403, 404, 409, 503),
        )
        def delete(self, match_id: str, seat: int) -> Response:
            """Give your seat back before the match starts: your token stops
            working and the seat is open again (listed again if the match is
            listed). The answer is the match as a spectator sees it."""
            token = required_token()
            return json_response(lifecycle_ops.leave(matches(), game, match_id, seat, token))
