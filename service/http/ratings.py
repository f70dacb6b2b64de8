"""Ratings of ranked play (issue 37): ``/v1/games/{game}/leaderboard`` (the
top, page by page, the bots' own board, or the caller's neighbourhood) and
``/v1/players/{id}/ratings`` (a player's ratings and every change, newest
first). Public reads, except ``?around=me``, which needs the caller's
player token. Who may call each, what it reveals and costs:
docs/operators/security.md; how ratings work: docs/clients/ratings.md.
Where they are kept: ``service.store.ratings``."""

from __future__ import annotations

from typing import Any

from flask import Response, current_app
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from engines import GAMES
from service.domain.problems import Problem
from service.domain.ratings import shown
from service.http.answers import json_response, problems
from service.http.arguments import Blueprint
from service.http.credentials import no_players, required_credential
from service.http.history import Cursor
from service.http.players import PLAYER_ID, PRIVATE_ANSWER, players, rfc3339
from service.http.rating_schemas import RatingSchema
from service.store.ratings import Ratings
from service.store.searches import encode_cursor

MAX_LIMIT = 100
# a board changes as rated matches end: a client or a shared cache may reuse
# a page this long
PUBLIC_ANSWER = {"Cache-Control": "public, max-age=5"}


def ratings() -> Ratings:
    found = current_app.extensions.get("ludotheque.ratings")
    if found is None:
        raise no_players()
    return found


# -- schemas -----------------------------------------------------------------------
class GamePathSchema(Schema):
    game = fields.String(required=True, validate=validate.OneOf(sorted(GAMES)))


class LeaderboardQuerySchema(Schema):
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(1, MAX_LIMIT),
        metadata={"description": f"entries per page, 1 to {MAX_LIMIT}"},
    )
    after = fields.Integer(
        load_default=0,
        validate=validate.Range(0, 10**9),
        metadata={"description": "the entries ranked below this rank (a page's `next`)"},
    )
    bots = fields.String(
        validate=validate.OneOf(["only"]),
        metadata={"description": "`only`: the bots' leaderboard (bot accounts only)"},
    )
    around = fields.String(
        validate=validate.OneOf(["me"]),
        metadata={
            "description": "`me`: the page around the caller's own rank (needs its player "
            "token; `after` is then ignored)"
        },
    )


class LeaderboardEntrySchema(RatingSchema):
    rank = fields.Integer(required=True, metadata={"description": "1: the best"})
    player = fields.String(required=True, metadata={"description": "the player's public id"})
    name = fields.String(required=True, metadata={"description": "not unique; ids are"})
    bot = fields.Boolean(required=True, metadata={"description": "a bot account"})


class LeaderboardSchema(Schema):
    game = fields.String(required=True)
    bots_only = fields.Boolean(required=True, metadata={"description": "the bots' leaderboard"})
    min_matches = fields.Integer(
        required=True, metadata={"description": "rated matches a player needs to be listed"}
    )
    listed = fields.Integer(required=True, metadata={"description": "players listed in all"})
    entries = fields.List(
        fields.Nested(LeaderboardEntrySchema),
        required=True,
        metadata={"description": "best first"},
    )
    next = fields.Integer(
        allow_none=True,
        required=True,
        metadata={"description": "pass it as ?after= for the next page; null at the end"},
    )


class PlayerRatingsPathSchema(Schema):
    player_id = fields.String(required=True, validate=PLAYER_ID)


class PlayerRatingsQuerySchema(Schema):
    game = fields.String(
        validate=validate.OneOf(sorted(GAMES)),
        metadata={"description": "only this game's rating and changes"},
    )
    limit = fields.Integer(
        load_default=20,
        validate=validate.Range(1, MAX_LIMIT),
        metadata={"description": f"changes per page, 1 to {MAX_LIMIT}"},
    )
    cursor = Cursor(metadata={"description": "a page's `next`, for the page after it"})


class RatingChangeSchema(Schema):
    match = fields.String(required=True, metadata={"description": "the rated match's id"})
    game = fields.String(required=True)
    seat = fields.Integer(required=True)
    rank = fields.Integer(
        required=True, metadata={"description": "the seat's place in the match (1: first)"}
    )
    ended_at = fields.String(required=True, metadata={"description": "RFC 3339"})
    before = fields.Nested(RatingSchema, required=True)
    after = fields.Nested(RatingSchema, required=True)


class PlayerRatingsSchema(Schema):
    player = fields.String(required=True)
    ratings = fields.Dict(
        keys=fields.String(),
        values=fields.Nested(RatingSchema),
        required=True,
        metadata={"description": "the player's current rating per game it was rated in"},
    )
    changes = fields.List(
        fields.Nested(RatingChangeSchema),
        required=True,
        metadata={
            "description": "newest first; a match shows here once archived (seconds after it ends)"
        },
    )
    next = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "pass it as ?cursor= for the next page; null at the end"},
    )


# -- answers -----------------------------------------------------------------------
def leaderboard(game: str, query: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The page of ``game``'s leaderboard the query asks for, and its cache headers."""
    kept, bots = ratings(), query.get("bots") == "only"
    limit, start, headers = query["limit"], query["after"], PUBLIC_ANSWER
    if query.get("around") == "me":
        me = required_credential("player").id
        place = kept.rank_of(game, bots, me)
        if place is None:
            mine = kept.current(game, [me]).get(me)
            played = mine.matches if mine else 0
            raise Problem(
                404,
                "not_on_leaderboard",
                f"you are not on the {game} {'bots-only ' if bots else ''}leaderboard: a "
                f"player is listed after {kept.min_matches} rated matches (you have {played})"
                + ("; only bot accounts are on the bots-only one" if bots else ""),
            )
        start, headers = max(0, place - limit // 2), PRIVATE_ANSWER
    entries = kept.top(game, bots, start, limit)
    listed = kept.listed(game, bots)
    last = start + limit
    return {
        "game": game,
        "bots_only": bots,
        "min_matches": kept.min_matches,
        "listed": listed,
        "entries": [
            {k: v for k, v in e.items() if k != "rating"} | shown(e["rating"]) for e in entries
        ],
        "next": last if last < listed else None,
    }, headers


def player_ratings(player_id: str, query: dict[str, Any]) -> dict[str, Any]:
    if players().get(player_id) is None:
        raise Problem(404, "player_not_found", f"no player {player_id!r}")
    kept, game = ratings(), query.get("game")
    current = kept.every_game(player_id)
    if game is not None:
        current = {g: r for g, r in current.items() if g == game}
    changes = kept.changes(player_id, game, query["limit"], query.get("cursor"))
    last = changes[-1] if len(changes) == query["limit"] else None
    return {
        "player": player_id,
        "ratings": {g: shown(r) for g, r in current.items()},
        "changes": [
            {
                "match": c["match"],
                "game": c["game"],
                "seat": c["seat"],
                "rank": c["rank"],
                "ended_at": rfc3339(c["ended_ms"]),
                "before": shown(c["before"]),
                "after": shown(c["after"]),
            }
            for c in changes
        ],
        "next": encode_cursor(last["ended_ms"], last["match"]) if last else None,
    }


def ratings_blueprint() -> Blueprint:
    blp = Blueprint(
        "ratings",
        __name__,
        url_prefix="/v1",
        description="Ranked play's ratings: leaderboards per game, a player's rating history",
    )

    @blp.route("/games/<game>/leaderboard")
    class Leaderboard(MethodView):
        @blp.arguments(GamePathSchema(), location="path", as_kwargs=True)
        @blp.arguments(LeaderboardQuerySchema(), location="query")
        @blp.response(200, LeaderboardSchema)
        @blp.doc(
            operationId="get_leaderboard",
            security=[{}, {"playerToken": []}],
            **problems(401, 403, 404, 422, 503),
        )
        def get(self, query: dict[str, Any], game: str) -> Response:
            """The game's leaderboard, best first, by display rating: players
            with enough rated matches (`min_matches`), deleted players left
            out; `?bots=only` the bots' own; `?around=me` the page around the
            caller (its player token; 404 `not_on_leaderboard` when it is not
            listed). Never an app, an external id nor anything secret."""
            answer, headers = leaderboard(game, query)
            return json_response(answer, 200, headers)

    @blp.route("/players/<player_id>/ratings")
    class PlayerRatings(MethodView):
        @blp.arguments(PlayerRatingsPathSchema(), location="path", as_kwargs=True)
        @blp.arguments(PlayerRatingsQuerySchema(), location="query")
        @blp.response(200, PlayerRatingsSchema)
        @blp.doc(operationId="get_player_ratings", security=[{}], **problems(404, 422, 503))
        def get(self, query: dict[str, Any], player_id: str) -> Response:
            """A player's current rating per game (or for `?game=`) and every
            change, with its match, newest first, page by page."""
            return json_response(player_ratings(player_id, query), 200, PUBLIC_ANSWER)

    return blp
