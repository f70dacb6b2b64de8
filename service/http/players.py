"""Players and apps: ``/v1/players`` (guests, public profiles, one's own
tokens and account) and ``/v1/apps/me/players`` (an app's users, server to
server). Who may call each, what it reveals and costs:
docs/operators/security.md. How tokens are kept: ``service.store.players``."""

from __future__ import annotations

import datetime
import time
from typing import Any

from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from engines import GAMES
from service.domain import lifecycle
from service.domain import tokens as auth
from service.domain.matches import Player
from service.domain.problems import Problem
from service.domain.views import status_of
from service.http import my_matches
from service.http.answers import json_response, matches, problems, records, replays
from service.http.arguments import Blueprint
from service.http.credentials import (
    credential,
    no_players,
    required_credential,
    unknown_token,
)
from service.http.schemas import valid_name
from service.store import player_matches, renamed_records
from service.store.archive import DELETED_NAME
from service.store.players import Players

PLAYER_TOKEN = [{"playerToken": []}]
ARCHIVED_MARGIN_S = 3600  # an archived match's expiry in Redis, give or take clocks and retries
APP_KEY = [{"appKey": []}]
PLAYER_ID = [
    validate.Regexp(r"^[0-9a-f]{32}$", error="a player id: 32 hexadecimal digits"),
    validate.Length(equal=32),  # ($ lets a trailing newline through)
]
# an answer holding a token is kept by no cache; one that depends on the token, privately
SECRET_ANSWER = {"Cache-Control": "no-store"}
PRIVATE_ANSWER = {"Cache-Control": "private, no-cache", "Vary": "Authorization"}


def external_id(text: str) -> None:
    """An app's id for its user: 1 to 200 printable characters (no controls,
    no lone surrogates: it is kept in the database as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValidationError("an external id is valid Unicode text") from None
    if not 1 <= len(text) <= 200 or not text.isprintable():
        raise ValidationError("an external id is 1 to 200 printable characters")


def players() -> Players:
    found = current_app.extensions.get("ludotheque.players")
    if found is None:
        raise no_players()
    return found


def rfc3339(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def player_of_request() -> Player:
    """The player whose token the request carries (401/403 otherwise)."""
    found = players().get(required_credential("player").id)
    if found is None:  # deleted since its token was read
        raise Problem(401, "invalid_token", "this token is unknown, revoked or expired")
    return found


def seat_player(asked: str) -> Player:
    """The player a seat is given to: ``me`` (the request's player) or, for
    an app, one of its own players by id."""
    if asked == "me":
        return as_seat_player(player_of_request())
    app = required_credential("app")
    found = players().get(asked)
    if found is None or found["app_id"] != app.id:
        raise Problem(404, "player_not_found", f"the app has no player {asked!r}")
    return as_seat_player(found)


def as_seat_player(found: dict[str, Any]) -> Player:
    return {
        "id": found["id"],
        "name": found["name"],
        "bot": found["bot"],
        "holder": players().holder(found["id"]),
    }


# -- schemas ---------------------------------------------------------------------
class NewPlayerSchema(Schema):
    name = fields.String(required=True, validate=valid_name, metadata={"example": "Ada"})
    bot = fields.Boolean(
        load_default=False,
        metadata={
            "description": "a bot account (only an app may make one; shown as a bot everywhere)"
        },
    )


class AppPlayerSchema(NewPlayerSchema):
    external_id = fields.String(
        required=True,
        validate=external_id,
        metadata={
            "description": "the app's own id for its user (1 to 200 printable characters): "
            "the same one is always the same player"
        },
    )


class TokenSchema(Schema):
    token = fields.String(
        required=True,
        metadata={
            "description": "a player token (`ldq_player_…`): shown once, keep it on the device"
        },
    )
    token_expires_at = fields.String(required=True, metadata={"description": "RFC 3339"})


class ProfileSchema(Schema):
    id = fields.String(required=True)
    name = fields.String(required=True, metadata={"description": "not unique; ids are"})
    bot = fields.Boolean(required=True, metadata={"description": "a bot account"})
    created_at = fields.String(required=True, metadata={"description": "RFC 3339"})
    matches_played = fields.Dict(
        keys=fields.String(),
        values=fields.Integer(),
        required=True,
        metadata={"description": "archived matches played, per game"},
    )


class CreatedPlayerSchema(ProfileSchema, TokenSchema):
    pass


class AppPlayerAnswerSchema(CreatedPlayerSchema):
    created = fields.Boolean(
        required=True, metadata={"description": "true when this call made the player"}
    )


class RevokedSchema(Schema):
    revoked = fields.Integer(required=True, metadata={"description": "how many tokens ended"})


class PlayerPathSchema(Schema):
    player_id = fields.String(required=True, validate=PLAYER_ID)


def profile_of(player_id: str) -> dict[str, Any]:
    found = players().profile(player_id)
    if found is None:
        raise Problem(404, "player_not_found", f"no player {player_id!r}")
    created = found.pop("created_ms")
    return found | {"created_at": rfc3339(created)}


def with_token(player_id: str, token: str) -> dict[str, Any]:
    expires = players().token_expiry(auth.token_hash(token))
    return profile_of(player_id) | {"token": token, "token_expires_at": rfc3339(expires or 0)}


def charge_creation() -> None:
    """A new player counts as a creation against its client's quotas."""
    quotas = matches().quotas
    if quotas is not None:
        quotas.admit(request.remote_addr or "unknown", None, time.time())


def players_blueprint() -> Blueprint:
    blp = Blueprint(
        "players",
        __name__,
        url_prefix="/v1",
        description="Players: guests, an app's users, bot accounts; their tokens and profiles",
    )

    @blp.route("/players")
    class PlayerCollection(MethodView):
        @blp.arguments(NewPlayerSchema())
        @blp.response(201, CreatedPlayerSchema)
        @blp.doc(
            operationId="create_player", security=[{}], **problems(400, 403, 413, 422, 429, 503)
        )
        def post(self, body: dict[str, Any]) -> Response:
            """Create a guest player (a browser's or a phone's): its id and
            first token, shown once. Counts as a creation against the caller's
            quotas. Only an app (with its key) may create a bot account."""
            found = credential()
            if body["bot"] and (found is None or found.kind != "app"):
                raise Problem(
                    403, "bot_accounts_by_apps", "only an app (or the operator) makes bot accounts"
                )
            charge_creation()
            app = found.id if found is not None and found.kind == "app" else None
            player, token = players().create(body["name"], body["bot"], app_id=app)
            return json_response(with_token(player["id"], token), 201, SECRET_ANSWER)

    @blp.route("/players/me")
    class Me(MethodView):
        @blp.response(200, ProfileSchema)
        @blp.doc(operationId="get_my_player", security=PLAYER_TOKEN, **problems(401, 403, 503))
        def get(self) -> Response:
            """Your player's profile."""
            return json_response(profile_of(player_of_request()["id"]), 200, PRIVATE_ANSWER)

        @blp.response(204)
        @blp.doc(operationId="delete_my_player", security=PLAYER_TOKEN, **problems(401, 403, 503))
        def delete(self) -> Response:
            """Leave for good: every token ends, the name becomes "deleted
            player" in the archive and its records, nothing else is kept."""
            forget(player_of_request()["id"])
            return Response(status=204)

    @blp.route("/players/me/tokens")
    class MyTokens(MethodView):
        @blp.response(201, TokenSchema)
        @blp.doc(operationId="renew_my_token", security=PLAYER_TOKEN, **problems(401, 403, 503))
        def post(self) -> Response:
            """A new token for your player, asked with the current one before
            it expires (which keeps working until then, or until revoked)."""
            found = required_credential("player")
            charge_creation()  # a token is a row kept for weeks: counted as a creation
            try:
                token = players().new_token(found.id, asked_with=found.digest)
            except LookupError:  # ended meanwhile (revoked, deleted, its app revoked)
                raise unknown_token() from None
            expires = players().token_expiry(auth.token_hash(token)) or 0
            answer = {"token": token, "token_expires_at": rfc3339(expires)}
            return json_response(answer, 201, SECRET_ANSWER)

        @blp.response(200, RevokedSchema)
        @blp.doc(operationId="revoke_my_tokens", security=PLAYER_TOKEN, **problems(401, 403, 503))
        def delete(self) -> Response:
            """End every token of your player, this one included (every device signs out)."""
            player = player_of_request()
            return json_response({"revoked": players().revoke(player["id"])})

    @blp.route("/players/me/tokens/current")
    class MyToken(MethodView):
        @blp.response(200, RevokedSchema)
        @blp.doc(operationId="revoke_my_token", security=PLAYER_TOKEN, **problems(401, 403, 503))
        def delete(self) -> Response:
            """End this token only (this device signs out)."""
            found = required_credential("player")
            return json_response({"revoked": players().revoke(found.id, found.digest)})

    my_matches.register(blp, PLAYER_TOKEN, player_of_request)

    @blp.route("/players/<player_id>")
    class PlayerResource(MethodView):
        @blp.arguments(PlayerPathSchema(), location="path", as_kwargs=True)
        @blp.response(200, ProfileSchema)
        @blp.doc(operationId="get_player", security=[{}], **problems(404, 422, 503))
        def get(self, player_id: str) -> Response:
            """A player's public profile: never its app, its app's id for it,
            nor anything secret."""
            return json_response(profile_of(player_id))

    @blp.route("/apps/me/players")
    class AppPlayers(MethodView):
        @blp.arguments(AppPlayerSchema())
        @blp.response(200, AppPlayerAnswerSchema)
        @blp.doc(
            operationId="app_player",
            security=APP_KEY,
            **problems(400, 401, 403, 413, 422, 429, 503),
        )
        def post(self, body: dict[str, Any]) -> Response:
            """Your app's player for your user ``external_id`` (made now if
            new, with ``name`` and ``bot``), and a new token for that user's
            device. The same external id is always the same player."""
            app = required_credential("app")
            charge_creation()
            try:
                player, token, created = players().for_app(
                    app.id, body["external_id"], body["name"], body["bot"]
                )
            except LookupError:  # the app was revoked meanwhile
                raise unknown_token() from None
            answer = with_token(player["id"], token) | {"created": created}
            return json_response(answer, 200, SECRET_ANSWER)

    @blp.route("/apps/me/players/<player_id>")
    class AppPlayer(MethodView):
        @blp.arguments(PlayerPathSchema(), location="path", as_kwargs=True)
        @blp.response(204)
        @blp.doc(operationId="delete_app_player", security=APP_KEY, **problems(401, 403, 404, 503))
        def delete(self, player_id: str) -> Response:
            """Delete one of your app's players, as it may delete itself."""
            forget(app_player(player_id))
            return Response(status=204)

    @blp.route("/apps/me/players/<player_id>/tokens")
    class AppPlayerTokens(MethodView):
        @blp.arguments(PlayerPathSchema(), location="path", as_kwargs=True)
        @blp.response(200, RevokedSchema)
        @blp.doc(
            operationId="revoke_app_player_tokens",
            security=APP_KEY,
            **problems(401, 403, 404, 503),
        )
        def delete(self, player_id: str) -> Response:
            """End every token of one of your app's players."""
            return json_response({"revoked": players().revoke(app_player(player_id))})

    return blp


def app_player(player_id: str) -> str:
    """``player_id``, if it is one of the request's app's players (404 otherwise:
    another app's player is not told apart from none)."""
    app = required_credential("app")
    if not players().owns(app.id, player_id):
        raise Problem(404, "player_not_found", f"the app has no player {player_id!r}")
    return player_id


def forget(player_id: str) -> None:
    """Leave for good (issue 36, point 7): its waiting tickets of the ranked
    queue are left; it is deleted (its tokens end, its app and external id
    are dropped, its name becomes "deleted player"); then its seats of live
    matches are given back or resigned, and its name becomes "deleted
    player" in their seats (a commit each, with a ``seat_renamed`` event),
    in the archive (seats, final answers, records signed again), in the
    archived matches Redis still has, and in this process's cached records
    and replays; its index of live matches is forgotten. A match archived
    meanwhile is renamed by the archive itself (``Archive.put``)."""
    queue = current_app.extensions.get("ludotheque.queue")
    if queue is not None:  # its tickets first: never matched from now on
        queue.leave_all(player_id)
    # first its tokens end and its app is dropped: what its seats cause from
    # here on (a resignation rated) reaches no app, and nothing new is joined
    players().delete(player_id)
    step_down(player_id, indexed(player_id))
    renamed = rename_live(player_id, indexed(player_id))
    archive = current_app.extensions["ludotheque.archive"]
    renamed += archive.rename_player(player_id)
    # archived matches stay in Redis FINISHED_TTL longer (their views are read there)
    since = time.time() - current_app.config["FINISHED_TTL"] - ARCHIVED_MARGIN_S
    renamed += rename_live(
        player_id, [m for _, m in archive.archived_since(player_id, int(since * 1000))]
    )
    client = matches().store.client
    player_matches.drop(client, player_id)
    renamed_records.note(client, renamed)  # every process drops its copies of their records
    for game_name, match_id in renamed:
        records().forget(GAMES[game_name], match_id)
        replays().forget(GAMES[game_name], match_id)


def indexed(player_id: str) -> list[str]:
    return player_matches.match_ids(matches().store.client, player_id)


def step_down(player_id: str, match_ids: list[str]) -> None:
    """A player leaving for good gives back its seats of waiting matches
    (open again, as if it had left) and resigns those of started ones (a bot
    plays them): nobody could play them any more, and a match must not
    wait, or start, with a seat nobody holds."""
    identity = players().identity("player", player_id)
    store = matches().store
    for match_id in match_ids:
        loaded = store.load(match_id)
        if loaded is None:
            continue
        game = GAMES[loaded.match["game"]]
        seats = [i for i, s in enumerate(loaded.match["seats"]) if s.get("player") == player_id]
        if not seats or loaded.match["seats"][seats[0]].get("awaits"):
            continue  # a rematch seat reserved for it: renamed, never started without it
        try:
            if status_of(game, loaded.match) == "waiting":
                lifecycle.leave(matches(), game, match_id, seats[0], identity)
            else:
                lifecycle.resign(matches(), game, match_id, identity, request.remote_addr)
        except Problem:  # over, resigned, seeded, changed meanwhile: renamed as it is
            continue


def rename_live(player_id: str, match_ids: list[str]) -> list[tuple[str, str]]:
    """Name the player "deleted player" in each of ``match_ids`` that Redis
    has; the (game, id) of the matches changed."""
    store, changed = matches().store, []
    for match_id in match_ids:
        loaded = store.load(match_id)
        if loaded is None:
            continue
        game = GAMES[loaded.match["game"]]
        try:
            if lifecycle.rename_player(matches(), game, match_id, player_id, DELETED_NAME):
                changed.append((game.name, match_id))
        except Problem as gone:
            if gone.code != "match_not_found":  # expired meanwhile: nothing to rename
                raise
    return changed
