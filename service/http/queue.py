"""The ranked queue: ``/v1/games/{game}/queue`` (its presets; joining) and
``/v1/queue/tickets/{id}`` (a ticket: long poll, leave). The matchmaker
that turns tickets into matches: ``service.background.matchmaker``; the
keys: ``service.store.queue``; for client builders: docs/clients/queue.md.
Who may call each, what it reveals and costs: docs/operators/security.md."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from flask import Response, current_app
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from engines import GAMES
from engines.core import Game
from service.domain.problems import Problem
from service.domain.queue import Preset, Presets, still_playing
from service.http.answers import following, json_response, matches, problems
from service.http.arguments import Blueprint
from service.http.calls_schemas import BOT_URL
from service.http.credentials import check_still_valid, required_credential
from service.http.game_schemas import game_schemas
from service.http.players import PLAYER_TOKEN, PRIVATE_ANSWER, as_seat_player, player_of_request
from service.http.streams import address
from service.live import shutdown as lifecycle
from service.live.hub import Follower
from service.store.queue import AlreadyQueued, Queue, wake_id

DEFAULT_TURN_TIMEOUT_S = 60  # a default preset's clock: an absent player times out
T = TypeVar("T")
TICKET_ID = [validate.Regexp(r"^[0-9a-f]{32}$"), validate.Length(equal=32)]


def presets_of(listed: dict[str, dict[str, dict[str, Any]]] | None) -> Presets:
    """The presets ``LUDOTHEQUE_QUEUE_PRESETS`` lists
    (``service.settings.presets.presets_in``; None: the defaults:
    each game, each player count n from 2 (a solitaire is not rated),
    preset ``<n>p`` with the default
    options, a ``DEFAULT_TURN_TIMEOUT_S`` turn clock and no bots), each
    one's options loaded as match creation loads them. ValueError names
    what is wrong."""
    if listed is None:
        listed = {
            name: {
                f"{n}p": {"players": n, "turn_timeout_s": DEFAULT_TURN_TIMEOUT_S}
                for n in range(max(2, game.min_players), game.max_players + 1)
            }
            for name, game in GAMES.items()
        }
    found: Presets = {}
    for name, presets in listed.items():
        game = GAMES.get(name)
        if game is None:
            raise ValueError(f"no game {name!r}")
        found[name] = {}
        for preset, fields_ in presets.items():
            where = f"{name}.{preset}"
            if not game.min_players <= fields_["players"] <= game.max_players:
                raise ValueError(
                    f"{where}: {name} takes {game.min_players} to {game.max_players} players"
                )
            asked = dict(fields_.get("options") or {})
            asked["turn_timeout_s"] = fields_.get("turn_timeout_s", DEFAULT_TURN_TIMEOUT_S)
            try:
                options = game_schemas(game)[0]().load(asked)
            except ValidationError as error:
                raise ValueError(f"{where}: options: {error.messages}") from None
            found[name][preset] = Preset(
                preset, fields_["players"], options, fields_.get("bot_after_s")
            )
    return found


def queue() -> Queue:
    return current_app.extensions["ludotheque.queue"]


def presets() -> Presets:
    return current_app.extensions["ludotheque.queue_presets"]


def game_named(name: str) -> Game:
    game = GAMES.get(name)
    if game is None or name not in presets():
        raise Problem(404, "game_not_found", f"no game {name!r} has a queue; see /v1/games")
    return game


def shown(ticket: dict[str, str]) -> dict[str, Any]:
    """A ticket as its player sees it."""
    status = ticket["status"]
    joined = int(ticket["joined"])
    settled = int(ticket.get("settled") or 0)
    until = (
        settled
        if status in ("matched", "expired", "left") and settled
        else int(time.time() * 1000)
    )
    return {
        "id": ticket["id"],
        "game": ticket["game"],
        "preset": ticket["preset"],
        "status": "waiting" if status == "claimed" else status,
        "match": {"id": ticket["match"], "seat": int(ticket["seat"])}
        if status == "matched"
        else None,
        "waited_s": round(max(0, until - joined) / 1000, 3),
        "expires_in_s": math.ceil(queue().idle_s) if status in ("waiting", "claimed") else None,
        "bot_url": ticket.get("bot_url") or None,
    }


def in_ranked_match(game: Game, player_id: str) -> str | None:
    """The live rated match of ``game`` where ``player_id`` holds a seat
    (its id; one that is being made: its claim), if any: one read of the
    player's index, whatever else it plays."""
    named = queue().ranked(player_id, game.name)
    load = matches().store.load
    return named if still_playing(game, named, load, int(time.time() * 1000)) else None


# -- schemas -----------------------------------------------------------------------
class QueuePresetSchema(Schema):
    name = fields.String(required=True)
    players = fields.Integer(required=True, metadata={"description": "seats of each match"})
    options = fields.Dict(required=True, metadata={"description": "the match options"})
    turn_timeout_s = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "each seat's turn clock (an absent player's turns time out)"},
    )
    bot_after_s = fields.Float(
        allow_none=True,
        required=True,
        metadata={
            "description": "a ticket that waited this long plays at once, the empty seats "
            "given to house bots of a close strength (null: never)"
        },
    )
    waiting = fields.Integer(required=True, metadata={"description": "tickets waiting now"})


class QueueSchema(Schema):
    game = fields.String(required=True)
    presets = fields.List(fields.Nested(QueuePresetSchema), required=True)


class QueueJoinSchema(Schema):
    preset = fields.String(required=True, validate=validate.Length(min=1, max=40))
    bot_url = BOT_URL


class QueueTicketMatchSchema(Schema):
    id = fields.String(required=True)
    seat = fields.Integer(required=True, metadata={"description": "your seat (0-based)"})


class QueueTicketSchema(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    preset = fields.String(required=True)
    status = fields.String(
        required=True,
        validate=validate.OneOf(["waiting", "matched", "expired", "left"]),
        metadata={"description": "waiting, matched (see match), expired (not asked for), left"},
    )
    match = fields.Nested(
        QueueTicketMatchSchema,
        allow_none=True,
        required=True,
        metadata={
            "description": "once matched: the match and your seat (play it with your player token)"
        },
    )
    waited_s = fields.Float(required=True, metadata={"description": "seconds waited in the queue"})
    expires_in_s = fields.Integer(
        allow_none=True,
        required=True,
        metadata={
            "description": "a waiting ticket nobody asks for (GET) within this many seconds "
            "expires"
        },
    )
    bot_url = fields.String(allow_none=True, required=True)


class QueueGamePathSchema(Schema):
    game = fields.String(required=True, validate=validate.Length(min=1, max=40))


class QueueTicketPathSchema(Schema):
    ticket_id = fields.String(required=True)


class QueueTicketQuerySchema(Schema):
    wait = fields.Float(
        load_default=0,
        validate=validate.Range(min=0, max=30),
        metadata={
            "description": "long poll: answer as soon as the ticket is matched (or no longer "
            "waiting), waiting at most this many seconds (at most 30)"
        },
    )


def ticket_of_request(ticket_id: str) -> tuple[dict[str, str], str, str]:
    """The caller's ticket ``ticket_id`` (renewed) with its game and preset;
    404 for any other, as if it did not exist."""
    player = required_credential("player")
    where = queue().locate(ticket_id) if len(ticket_id) == 32 else None
    ticket = None if where is None else queue().poll(ticket_id, where[1], where[0], renew=False)
    if where is None or ticket is None or ticket.get("player") != player.id:
        raise Problem(404, "ticket_not_found", f"no ticket {ticket_id!r}")
    game, preset = where
    return queue().poll(ticket_id, preset, game) or ticket, game, preset


def waited(
    ticket_id: str, game: str, preset: str, ticket: dict[str, str], wait_s: float
) -> dict[str, str]:
    """The ticket once it is no longer waiting, waiting at most ``wait_s``:
    woken by the push hub when the matchmaker settles it (the hub's
    periodic check wakes it too, so no wake-up is lost)."""
    if ticket["status"] not in ("waiting", "claimed") or wait_s <= 0:
        return ticket
    return woken(
        wake_id(ticket_id),
        wait_s,
        lambda: queue().poll(ticket_id, preset, game) or ticket,
        lambda found: found["status"] not in ("waiting", "claimed"),
    )


def woken(wake: str, wait_s: float, read: Callable[[], T], ready: Callable[[T], bool]) -> T:
    """A player's long poll on the push hub's name ``wake``: what ``read``
    gives once ``ready`` says it is, else after ``wait_s``. It counts
    against the follower caps (by address and by the player's token) as a
    stream does, and follows the hub before its first read, so that a
    wake-up sent after that read is never lost."""
    live = following()
    holder = required_credential("player").digest
    held = live.allowances.hold(address(), [holder], wait_s + 30)
    follower = Follower([wake], reads_itself=True)
    try:
        live.hub.follow(follower)  # before the read: a change made after it wakes this wait
        deadline = time.monotonic() + wait_s
        found = read()
        while not ready(found):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or lifecycle.stopping() or live.hub.stopped:
                break
            if follower.take(min(remaining, 1.0)):
                found = read()
    finally:
        live.hub.unfollow(follower, linger=False)
        live.allowances.release(held)
    check_still_valid()  # a player token revoked while it waited
    return found


def queue_blueprint() -> Blueprint:
    blp = Blueprint(
        "queue",
        __name__,
        url_prefix="/v1",
        description="The ranked queue: presets, tickets, matches found by strength",
    )

    @blp.route("/games/<game>/queue")
    class GameQueue(MethodView):
        @blp.arguments(QueueGamePathSchema(), location="path", as_kwargs=True)
        @blp.response(200, QueueSchema)
        @blp.doc(operationId="get_queue", security=[{}], **problems(404, 503))
        def get(self, game: str) -> Response:
            """The game's queue presets, and how many tickets wait in each."""
            game_named(game)
            listed = [
                preset.shown() | {"waiting": queue().count(game, preset.name)}
                for preset in presets()[game].values()
            ]
            return json_response({"game": game, "presets": listed})

        @blp.arguments(QueueGamePathSchema(), location="path", as_kwargs=True)
        @blp.arguments(QueueJoinSchema())
        @blp.response(201, QueueTicketSchema)
        @blp.doc(
            operationId="join_queue",
            security=PLAYER_TOKEN,
            **problems(400, 401, 403, 404, 409, 413, 422, 429, 503),
        )
        def post(self, body: dict[str, Any], game: str) -> Response:
            """Join the game's queue with your player token: a ticket. Ask
            for it (`GET /v1/queue/tickets/{id}?wait=30`) until it is
            matched; a waiting ticket nobody asks for in 60 s expires. One
            ticket per player per game (409 `already_queued`), none while
            you hold a seat of a live rated match of the game (409
            `in_ranked_match`). A bot account may give a `bot_url`: the
            server calls it to play its seat."""
            found = game_named(game)
            preset = presets()[game].get(body["preset"])
            if preset is None:
                raise Problem(
                    422,
                    "unknown_preset",
                    f"{game} has the presets {sorted(presets()[game])}",
                )
            player = player_of_request()
            if body.get("bot_url") is not None and not player["bot"]:
                raise Problem(403, "bot_accounts_only", "only a bot account may queue a bot_url")
            busy = in_ranked_match(found, player["id"])
            if busy is not None:
                raise Problem(
                    409,
                    "in_ranked_match",
                    f"you hold a seat of the live rated match {busy}: finish it first",
                    match=busy,
                )
            fields_ = {"seat_player": orjson.dumps(as_seat_player(player)).decode()}
            if body.get("bot_url"):
                fields_["bot_url"] = body["bot_url"]
            try:
                ticket = queue().join(game, preset.name, player["id"], fields_)
            except AlreadyQueued as queued:
                raise Problem(
                    409,
                    "already_queued",
                    f"you are in {game}'s queue already: ticket {queued.ticket_id}",
                    ticket=queued.ticket_id,
                ) from None
            return json_response(shown(ticket), 201, PRIVATE_ANSWER)

    @blp.route("/queue/tickets/<ticket_id>")
    class TicketResource(MethodView):
        @blp.arguments(QueueTicketPathSchema(), location="path", as_kwargs=True)
        @blp.arguments(QueueTicketQuerySchema(), location="query", as_kwargs=True)
        @blp.response(200, QueueTicketSchema)
        @blp.doc(
            operationId="get_ticket", security=PLAYER_TOKEN, **problems(401, 403, 404, 429, 503)
        )
        def get(self, ticket_id: str, wait: float) -> Response:
            """Your ticket (anyone else's: 404), which this keeps waiting;
            with `wait`, a long poll that answers as soon as it is matched."""
            ticket, game, preset = ticket_of_request(ticket_id)
            ticket = waited(ticket_id, game, preset, ticket, wait)
            return json_response(shown(ticket), 200, PRIVATE_ANSWER)

        @blp.arguments(QueueTicketPathSchema(), location="path", as_kwargs=True)
        @blp.response(200, QueueTicketSchema)
        @blp.doc(
            operationId="leave_queue", security=PLAYER_TOKEN, **problems(401, 403, 404, 409, 503)
        )
        def delete(self, ticket_id: str) -> Response:
            """Leave the queue: a waiting ticket is left. A matched one is not
            (409 `ticket_matched`): resign its match, which ranks you last."""
            ticket, game, preset = ticket_of_request(ticket_id)
            if ticket["status"] in ("waiting", "claimed") and not queue().leave(
                game, preset, ticket_id
            ):
                ticket = queue().poll(ticket_id, preset, game, renew=False) or ticket
            else:
                ticket = queue().poll(ticket_id, preset, game, renew=False) or ticket
            if ticket["status"] == "matched":
                raise Problem(
                    409,
                    "ticket_matched",
                    f"this ticket was matched: resign match {ticket['match']} to leave it "
                    "(a resignation ranks you last)",
                    match=ticket["match"],
                )
            return json_response(shown(ticket), 200, PRIVATE_ANSWER)

    return blp
