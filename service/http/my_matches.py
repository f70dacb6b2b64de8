"""``GET /v1/players/me/matches``: the request's player's matches (issue 36,
point 4), waiting, active and finished, page by page.

The order, one walk from the first page to the last:

1. **live** ones first, from Redis: each match the player has a seat in
   (held, or a rematch seat reserved for it), newest *created* first (then
   by id), from the player's index (``service.store.player_matches``); a
   match over but not archived yet is among them, ``finished``;
2. then **archived** ones, from the archive's ``match_players``: newest
   *ended* first, then by id (keyset: a page costs the same however deep).

A cursor says where the walk is (which part, the last key shown) and when
it began: from then on only matches archived by then are listed from the
archive, so that one shown live on an early page and archived while the
client reads on is not shown twice. A match that ends and is archived
during a walk is thus in neither part of it (a new walk has it). A page may
hold fewer than ``limit`` matches while ``next`` still points further
(stale entries skipped in the index). Every device of the player (each of
its tokens) sees the same list.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from typing import Any

import orjson
import sqlalchemy as sa
from flask import Response, current_app
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from engines import GAMES
from service.domain.views import public_seats, status_of
from service.http.answers import json_response, matches, problems
from service.http.arguments import Blueprint
from service.http.contract import header_ref
from service.http.history import archive, unavailable
from service.store import player_matches, searches

PAGE_LIMIT = 100
CACHE_CONTROL = "private, no-store"  # a player's own, and changing at every seat taken
LIVE = re.compile(r"^L:(0|[1-9][0-9]{0,15}):([0-9]{13}:[0-9a-f]{32})$")
ARCHIVED = re.compile(r"^A:(0|[1-9][0-9]{0,15})(?::(0|[1-9][0-9]{0,15}):([0-9a-f]{32}))?$")


class Where:
    """A walk's position: ``part`` ``L`` (live: after the index member
    ``key``) or ``A`` (archived: after the key (ended ms, id)); ``began``:
    the walk's first page, in ms."""

    def __init__(self, part: str, began: int, key: Any = None) -> None:
        self.part = part
        self.began = began
        self.key = key

    def encode(self) -> str:
        if self.part == "L":
            raw = f"L:{self.began}:{self.key}"
        elif self.key is None:
            raw = f"A:{self.began}"
        else:
            raw = f"A:{self.began}:{self.key[0]}:{self.key[1]}"
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, cursor: str) -> Where:
        if not (0 < len(cursor) <= 120 and cursor.isascii()):
            raise ValueError("not a cursor")
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise ValueError("not a cursor") from None
        if found := LIVE.match(raw):
            where = cls("L", int(found[1]), found[2])
        elif found := ARCHIVED.match(raw):
            key = None if found[2] is None else (int(found[2]), found[3])
            where = cls("A", int(found[1]), key)
        else:
            raise ValueError("not a cursor")
        if where.encode() != cursor:
            raise ValueError("not a cursor")
        return where


class MyCursor(fields.String):
    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> Where:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return Where.decode(text)
        except ValueError:
            raise ValidationError("not a cursor: pass a page's `next` as it is") from None


class MyMatchesQuerySchema(Schema):
    cursor = MyCursor(
        metadata={"description": "the `next` of the previous page, as it is (up to 120 chars)"},
    )
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=PAGE_LIMIT))


class MySeatSchema(Schema):
    seat = fields.Integer(required=True)
    name = fields.String(required=True, allow_none=True)
    bot = fields.String(required=True, allow_none=True, metadata={"description": "a bot kind"})
    open = fields.Boolean(metadata={"description": "free to join (live matches only)"})
    reserved = fields.Boolean(metadata={"description": "a rematch seat awaiting its player"})
    player = fields.String(metadata={"description": "the player who holds it, if one does"})
    bot_account = fields.Boolean(metadata={"description": "that player is a bot account"})


class MyMatchLinksSchema(Schema):
    match = fields.String(required=True, metadata={"description": "the match's URL path"})
    record = fields.String(
        required=True, metadata={"description": "its signed record's (once it is finished)"}
    )
    replay = fields.String(
        required=True, metadata={"description": "its replay's (once it is finished)"}
    )


class MyMatchSchema(Schema):
    id = fields.String(required=True)
    game = fields.String(required=True)
    status = fields.String(
        required=True, validate=validate.OneOf(["waiting", "active", "finished"])
    )
    seat = fields.Integer(required=True, metadata={"description": "your seat"})
    seats = fields.List(fields.Nested(MySeatSchema), required=True)
    created_at = fields.String(required=True, metadata={"description": "RFC 3339, UTC"})
    ended_at = fields.String(
        required=True, allow_none=True, metadata={"description": "RFC 3339, UTC; null: not over"}
    )
    links = fields.Nested(MyMatchLinksSchema, required=True)


class MyMatchesPageSchema(Schema):
    items = fields.List(
        fields.Nested(MyMatchSchema),
        required=True,
        metadata={
            "description": "live ones first (newest created first), then archived ones "
            "(newest ended first)"
        },
    )
    next = fields.String(
        required=True,
        allow_none=True,
        metadata={"description": "pass it as ?cursor= for the next page; null at the end"},
    )


def rfc3339(ms: int) -> str:
    moment = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S.", moment) + f"{ms % 1000:03d}Z"


def links(game: str, match_id: str) -> dict[str, str]:
    path = f"/v1/games/{game}/matches/{match_id}"
    return {"match": path, "record": f"{path}/record", "replay": f"{path}/replay"}


def live_item(match: dict[str, Any], player_id: str) -> dict[str, Any]:
    game = GAMES[match["game"]]
    status = status_of(game, match)
    ended = match.get("ended_at") if status == "finished" else None
    return {
        "id": match["id"],
        "game": game.name,
        "status": status,
        "seat": player_matches.seated(match)[player_id],
        "seats": public_seats(match),
        "created_at": rfc3339(int(match["created_at"] * 1000)),
        "ended_at": None if ended is None else rfc3339(int(ended * 1000)),
        "links": links(game.name, match["id"]),
    }


def archived_seat(seat: dict[str, Any]) -> dict[str, Any]:
    return (
        {"seat": seat["seat"], "name": seat.get("name"), "bot": seat.get("bot")}
        | ({"player": seat["player"]} if seat.get("player") else {})
        | ({"bot_account": True} if seat.get("bot_account") else {})
    )


def archived_item(row: sa.Row) -> dict[str, Any]:
    return {
        "id": row.id,
        "game": row.game,
        "status": "finished",
        "seat": row.seat,
        "seats": [archived_seat(seat) for seat in orjson.loads(row.seats)],
        "created_at": rfc3339(row.created_ms),
        "ended_at": rfc3339(row.ended_ms),
        "links": links(row.game, row.id),
    }


def listing(player_id: str, limit: int, where: Where | None) -> dict[str, Any]:
    """A page of the player's matches, and where the next one starts."""
    where = where or Where("L", int(time.time() * 1000))
    items: list[dict[str, Any]] = []
    if where.part == "L":
        ttl = current_app.extensions["ludotheque.player_matches_ttl"]
        shown, last = player_matches.page(matches().store, player_id, limit, ttl, where.key)
        items = [live_item(match, player_id) for match, _version in shown]
        if last is not None:
            return {"items": items, "next": Where("L", where.began, last).encode()}
        where = Where("A", where.began)
    engine = archive().engine
    room = limit - len(items)
    try:
        rows, last_key = searches.player_page(
            engine, player_id, max(room, 1), where.key, where.began
        )
    except sa.exc.OperationalError as error:
        raise unavailable(error) from None
    if room == 0:  # the page is full of live ones: is there anything archived?
        after = Where("A", where.began) if rows else None
        return {"items": items, "next": None if after is None else after.encode()}
    items += [archived_item(row) for row in rows]
    after = None if last_key is None else Where("A", where.began, last_key)
    return {"items": items, "next": None if after is None else after.encode()}


def register(blp: Blueprint, player_token: list[dict[str, list[str]]], me: Any) -> None:
    """Add the route to the players' blueprint (``me()``: the request's player)."""

    @blp.route("/players/me/matches")
    class MyMatches(MethodView):
        @blp.arguments(MyMatchesQuerySchema(), location="query")
        @blp.response(
            200, MyMatchesPageSchema, headers={"Cache-Control": header_ref("Cache-Control")}
        )
        @blp.doc(
            operationId="list_my_matches",
            security=player_token,
            **problems(401, 403, 422, 429, 503),
        )
        def get(self, query: dict[str, Any]) -> Response:
            """Your player's matches, page by page: first the live ones
            (waiting, active, or over but not archived yet), newest created
            first, then the archived ones, newest ended first. Every device
            of your player sees the same list. `next` continues the walk;
            a match archived after the walk began is not listed by it again
            (a new walk, without `cursor`, has everything)."""
            player_id = me()["id"]
            body = listing(player_id, query["limit"], query.get("cursor"))
            return json_response(body, headers={"Cache-Control": CACHE_CONTROL})
