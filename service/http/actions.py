"""Playing: ``/v1/games/G/matches/{id}/legal-actions`` and ``.../actions``."""

from __future__ import annotations

from typing import Any

from flask import Response, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError

from service.domain.problems import Problem
from service.http.answers import (
    SEAT_TOKEN,
    answer_etag,
    json_response,
    matches,
    problems,
    required_token,
)
from service.http.arguments import Blueprint
from service.http.caching import VIEWER_HEADERS, if_match_version, request_header
from service.http.contract import header_parameters, header_ref
from service.http.cors import body_version
from service.http.game_schemas import GameContract
from service.http.schemas import ActionQuerySchema

# What an action body may load to and be shared between requests: a flat
# object of scalars, from a small body (Dékal's, Pacal's, Ducale's actions;
# Gaudí's carry lists of tiles and are loaded every time).
SCALARS = (type(None), bool, int, float, str)
SMALL_BODY = 256  # bytes
KEPT = 256  # bodies loaded, per game (then forgotten, to start again)


class ActionLoader:
    """A game's actions, each loaded by its type's schema (``schemas``: one
    instance per action type, built once).

    Clients play the same few actions again and again (``{"type": "take",
    "value": 5, "from": "right"}``), and marshmallow's load of one costs
    an action some 2 % of its CPU. What a small body loaded to is kept for
    the next request with the very same bytes, which loads to the same
    action (the schemas depend on nothing else), and each request gets its
    own copy; a body refused is refused every time (nothing kept)."""

    def __init__(self, schemas: dict[str, Schema]) -> None:
        self.schemas = schemas
        self.loaded: dict[bytes, dict[str, Any]] = {}

    def load(self) -> dict[str, Any]:
        """The request body as one of the game's actions."""
        raw = request.get_data(cache=True)
        loaded = self.loaded.get(raw)
        if loaded is not None:
            return dict(loaded)
        action = self.load_now()
        if len(raw) <= SMALL_BODY and all(isinstance(v, SCALARS) for v in action.values()):
            if len(self.loaded) >= KEPT:
                self.loaded.clear()  # (threads may share a loader: no partial eviction)
            self.loaded[raw] = dict(action)
        return action

    def load_now(self) -> dict[str, Any]:
        body = request.get_json(force=True)
        if not isinstance(body, dict):
            raise Problem(400, "invalid_request", "the body must be a JSON object")
        kind = body.get("type")
        schema = self.schemas.get(kind) if isinstance(kind, str) else None
        if schema is None:
            raise Problem(
                422,
                "invalid_request",
                f"'type' must be one of {sorted(self.schemas)}",
                errors={"type": [f"one of {sorted(self.schemas)}"]},
            )
        try:
            return schema.load(body)
        except ValidationError as invalid:
            raise Problem(
                422,
                "invalid_request",
                "the action does not match its schema",
                errors=invalid.messages,
            ) from None


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name
    actions = ActionLoader(contract.loaders)

    @blp.route("/matches/<match_id>/legal-actions")
    class LegalActions(MethodView):
        @blp.response(200, contract.ref["legal_actions"], headers=VIEWER_HEADERS)
        @blp.doc(
            operationId=f"{name}_legal_actions",
            security=SEAT_TOKEN,
            **problems(401, 403, 404, 503),
        )
        def get(self, match_id: str) -> Response:
            """Every action the caller's seat may play now, each exactly as
            `POST .../actions` takes it (empty when it is not the seat's turn)."""
            return json_response(matches().legal_actions(game, match_id, required_token()))

    @blp.route("/matches/<match_id>/actions")
    class Actions(MethodView):
        @blp.arguments(ActionQuerySchema(), location="query", as_kwargs=True)
        @blp.response(
            200,
            contract.match,
            headers={
                "ETag": header_ref("ETag"),
                "Idempotent-Replayed": header_ref("Idempotent-Replayed"),
            }
            | VIEWER_HEADERS,
        )
        @blp.doc(
            operationId=f"{name}_play_action",
            security=SEAT_TOKEN,
            requestBody={
                "required": True,
                "description": "the action; it may also carry `if_version` (an integer): "
                "play only if the match is still at this version, as `If-Match` says it, "
                "without the header that makes a browser send a CORS preflight per action",
                "content": {"application/json": {"schema": contract.ref["action"]}},
            },
            **header_parameters(
                {
                    "in": "header",
                    "name": "If-Match",
                    "schema": {"type": "string"},
                    "description": "play only if the match is still at this version (else "
                    '412): `"7"`, or the `ETag` of a view of it, `"7-s0"`',
                },
                {
                    "in": "header",
                    "name": "Idempotency-Key",
                    "schema": {"type": "string", "maxLength": 200},
                    "description": "a retried request with the same key returns the first answer",
                },
            ),
            **problems(400, 401, 403, 404, 409, 412, 413, 422, 503),
        )
        def post(self, match_id: str, legal_actions: bool) -> Response:
            """Play one action; the answer is the match as the caller sees it after it
            (with `?legal_actions=true`, and the seat's legal actions then)."""
            token = required_token()
            if_match = if_match_version()
            if_version = body_version()  # If-Match, for a page: no preflight per action
            if_match = if_version if if_match is None else if_match
            key = request_header("Idempotency-Key")
            if key is not None and not 1 <= len(key) <= 200:
                raise Problem(400, "invalid_request", "Idempotency-Key takes 1 to 200 characters")
            action = actions.load()
            body, replayed = matches().play(
                game, match_id, token, action, if_match, key, legal_actions
            )
            headers = {"ETag": answer_etag(body)}
            if replayed:
                headers["Idempotent-Replayed"] = "true"
            return json_response(body, headers=headers)
