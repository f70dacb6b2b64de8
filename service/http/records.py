"""Signed records: ``/v1/games/G/matches/{id}/record`` (a finished match's
whole record) and ``/v1/record-key`` (the key that signs them)."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.domain import signing
from service.http.answers import json_response, matches, problems, record_keys
from service.http.arguments import Blueprint
from service.http.game_schemas import GameContract, record_schema
from service.http.schemas import RecordKeySchema


def add_routes(blp: Blueprint, contract: GameContract) -> None:
    game = contract.game
    name = game.name

    @blp.route("/matches/<match_id>/record")
    class Record(MethodView):
        @blp.response(200, record_schema(game))
        @blp.doc(operationId=f"{name}_match_record", **problems(404, 409, 503))
        def get(self, match_id: str) -> Response:
            """The whole record of a finished match, for anyone: options, seed,
            salt, seats, every action in order with its seat, the outcome,
            signed by the server's record key (`GET /v1/record-key`). Check it
            with `ludotheque verify` (docs/clients/fairness.md); before the end, 409
            match_not_over."""
            record = signing.sign(matches().record(game, match_id), record_keys().get())
            # A finished match never changes: its record may be cached by anyone.
            return json_response(record, headers={"Cache-Control": "public, max-age=86400"})


def record_key_blueprint() -> Blueprint:
    blp = Blueprint("record-key", __name__, url_prefix="/v1", description="Signed records")

    @blp.route("/record-key")
    class RecordKey(MethodView):
        @blp.response(200, RecordKeySchema)
        @blp.doc(operationId="record_key", **problems(503))
        def get(self) -> Response:
            """The public half of the Ed25519 key that signs every match's
            record: check a record with `ludotheque verify --key` offline
            (docs/clients/fairness.md). It changes only when the deployment's key does."""
            published = record_keys().get().published()
            return json_response(published, headers={"Cache-Control": "public, max-age=3600"})

    return blp
