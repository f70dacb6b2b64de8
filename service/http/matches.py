"""A game's matches: ``/v1/games/G/matches`` (create; the lobby) and
``/v1/games/G/matches/{id}`` (a match as the caller may see it)."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from flask.views import MethodView

from service.domain.matches import present
from service.domain.problems import Problem
from service.http.answers import (
    OPTIONAL_SEAT_TOKEN,
    etag,
    following,
    json_response,
    matches,
    none_match,
    problems,
)
from service.http.arguments import Blueprint
from service.http.bearer import bearer_token
from service.http.caching import VIEWER_HEADERS
from service.http.contract import header_parameters, header_ref
from service.http.credentials import check_still_valid
from service.http.game_schemas import GameContract
from service.http.players import seat_player
from service.http.schemas import LobbyQuerySchema, LobbySchema, MatchQuerySchema
from service.http.streams import address
from service.live.turns import turn_of
from service.store import lobby


def seated(player: dict[str, Any]) -> dict[str, Any]:
    """A creation body's seat, with the player it names looked up."""
    if "player" not in player:
        return player
    found = seat_player(player["player"])
    return {"name": found["name"], "player": found}


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name

    @blp.route("/matches")
    class MatchCollection(MethodView):
        @blp.arguments(contract.create())
        @blp.response(
            201,
            contract.match,
            headers={"ETag": header_ref("ETag"), "Location": header_ref("Location")},
        )
        @blp.doc(
            operationId=f"{name}_create_match",
            **problems(400, 401, 403, 404, 409, 413, 422, 429, 503),
        )
        def post(self, body: dict[str, Any]) -> Response:
            """Create a match.

            Each `{"name": ..}` seat is taken now and gets its token in this
            answer only; a `{"player": "me"}` seat is your player's (with a
            player token), held by its own tokens; each `{}` seat stays open
            for someone to join.
            """
            options = body.get("options") or contract.options().load({})
            answer = matches().create(
                game,
                [seated(p) for p in body["players"]],
                options,
                body.get("seed"),
                body["listed"],
                creator=request.remote_addr,
                calls={k: body.get(k) for k in ("webhook", "bot_deadline_s")},
            )
            location = f"/v1/games/{name}/matches/{answer['id']}"
            return json_response(
                answer, 201, {"Location": location, "ETag": etag(answer["version"])}
            )

        @blp.arguments(LobbyQuerySchema(), location="query")
        @blp.response(200, LobbySchema)
        @blp.doc(operationId=f"{name}_lobby", **problems(422, 503))
        def get(self, query: dict[str, Any]) -> Response:
            """The lobby: listed matches with open seats, newest first (no tokens)."""
            store = matches().store
            return json_response(
                lobby.page(
                    store,
                    game,
                    query["limit"],
                    query.get("cursor"),
                    query.get("players"),
                    query["open_seats"],
                )
            )

    @blp.route("/matches/<match_id>")
    class MatchResource(MethodView):
        @blp.arguments(MatchQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, contract.match, headers={"ETag": header_ref("ETag")} | VIEWER_HEADERS)
        @blp.doc(
            operationId=f"{name}_get_match",
            security=OPTIONAL_SEAT_TOKEN,
            **header_parameters(
                {"in": "header", "name": "If-None-Match", "schema": {"type": "string"}}
            ),
            **problems(401, 403, 404, 429, 503),
        )
        @blp.alt_response(
            304,
            description="Not modified: your view of this version is the one you named",
            headers={"ETag": header_ref("ETag")} | VIEWER_HEADERS,
        )
        def get(self, match_id: str, legal_actions: bool, wait: float) -> Response:
            """The match as the caller may see it: a seat's view with its token,
            a spectator's without. `ETag` names the version and the viewer; the
            token is checked before `If-None-Match` is. A `wait` that waits is a
            long poll: it counts against the follower caps (429
            `too_many_followers`), and ends at once with 403 `invalid_token` if
            the token's seat changes hands meanwhile. Once Redis has forgotten
            a finished match (`LUDOTHEQUE_FINISHED_TTL` after it was archived),
            its end as a spectator saw it, from the archive, whatever the token."""
            token = bearer_token()
            try:
                if wait and token is not None:
                    # first the turn, then whether the version is news; a long
                    # poll, held against the follower caps as a stream is (its
                    # release travels while the view is laid out)
                    with turn_of(following(), game, match_id, token, wait, address()) as turn:
                        check_still_valid()  # a player token revoked while it waited
                        loaded, seat = turn
                        view = present(game, loaded.match, loaded.version, seat, legal_actions)
                else:
                    loaded = matches().load(game, match_id)
                    seat = matches().seat_for(loaded, token)
                    view = present(game, loaded.match, loaded.version, seat, legal_actions)
            except Problem as problem:
                # Redis forgot it: a finished match's end, as a spectator saw it
                final = problem.code == "match_not_found" and matches().archived(game, match_id)
                if not final:
                    raise
                if legal_actions:
                    final["legal_actions"] = []
                return answered(final, final["version"], None)
            return answered(view, loaded.version, seat)


def answered(payload: dict[str, Any], version: int, seat: int | None) -> Response:
    """``payload``, or 304 when the client named this version and viewer."""
    tag = etag(version, seat)
    if none_match(tag):
        return Response(status=304, headers={"ETag": tag})
    return json_response(payload, headers={"ETag": tag})
