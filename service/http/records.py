"""Signed records: ``/v1/games/G/matches/{id}/record`` (a finished match's
whole record), its replay for people (``.../replay``, step by step, from
the record) and ``/v1/record-key`` (the key that signs records)."""

from __future__ import annotations

from flask import Response
from flask.views import MethodView

from service.http.answers import json_response, problems, record_keys, records, replays
from service.http.arguments import Blueprint
from service.http.game_schemas import GameContract, record_schema, replay_schema
from service.http.schemas import RecordKeySchema, ReplayQuerySchema


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
            body = records().encoded(game, match_id)
            # A finished match never changes: its record may be cached by anyone.
            return json_response(body, headers={"Cache-Control": "public, max-age=86400"})

    @blp.route("/matches/<match_id>/replay")
    class Replay(MethodView):
        @blp.arguments(ReplayQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, replay_schema(game))
        @blp.doc(operationId=f"{name}_match_replay", **problems(404, 409, 422, 503))
        def get(self, match_id: str, start: int, limit: int) -> Response:
            """A finished match step by step, for anyone, computed from its
            record, a page of at most 200 steps at a time (`?from=K&limit=N`:
            the steps K to K+N-1; `next` names the next page's `from`, null on
            the last): step 0 is what a spectator saw at the start, then each
            action with its seat, the public events it caused and what a
            spectator saw after it; on the last page, `hands` is what each seat
            saw at the end, every hand revealed. The /play page shows it at
            `/play#replay/{game}/{id}`. Before the end, 409 match_not_over; a
            match of more than 20,000 actions has no replay (422
            replay_too_long: its record has every action)."""
            body = replays().page(game, match_id, start, limit)
            # A finished match never changes: its replay may be cached by anyone.
            return json_response(body, headers={"Cache-Control": "public, max-age=86400"})


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
