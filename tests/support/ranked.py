"""Rated matches between players, made as the ranked queue makes them
(``Matches.create(..., rated=True)``, seats held by players), and what a
worker does after them (the archiver)."""

from __future__ import annotations

from typing import Any

from engines import GAMES
from service.background.archiver import Archiver
from tests.support.client import ApiClient
from tests.support.matches import events_of, play_out
from tests.support.servers import LiveServer


def fresh_ratings(client: Any) -> None:
    """Forget every rating Redis keeps (a new Redis, or a flush): the next
    read rebuilds them from the database at hand. A module's server starts
    so, as the tests' Redis outlives each module's database."""
    found = list(client.scan_iter(match="ludotheque:{ratings}:*", count=1000))
    if found:
        client.delete(*found)


def new_player(server: LiveServer, name: str, bot: bool = False) -> dict[str, Any]:
    """A player made by the operator's store (a bot account needs no app so):
    its row and its token."""
    row, token = server.app.extensions["ludotheque.players"].create(name, bot)
    return {"id": row["id"], "name": name, "bot": bot, "token": token}


def rated_match(server: LiveServer, game: str, players: list[dict[str, Any]]) -> str:
    """A rated match of ``game`` whose seats ``players`` hold (or a built-in
    bot, given as ``{"bot": kind}``), as the queue makes it."""
    kept = server.app.extensions["ludotheque.players"]
    engine = GAMES[game]
    seats = [
        {
            "player": {
                "id": p["id"],
                "name": p["name"],
                "bot": p["bot"],
                "holder": kept.holder(p["id"]),
            }
        }
        if "id" in p
        else p
        for p in players
    ]
    options = engine.options_schema().load({})
    created = server.matches.create(engine, seats, options, None, rated=True)
    assert created["rated"] is True
    return created["id"]


def api_of(server: LiveServer) -> ApiClient:
    return ApiClient(server.base, server.http)


def play_to_the_end(
    server: LiveServer, game: str, match_id: str, players: list[dict[str, Any]], seed: int = 0
) -> dict[str, Any]:
    """Random legal actions by the players (with their player tokens) until
    the match ends; the match as it then is."""
    return play_out(api_of(server), game, match_id, [p.get("token") for p in players], seed)


def resign(server: LiveServer, game: str, match_id: str, token: str) -> Any:
    return server.http.post(
        f"{server.base}/v1/games/{game}/matches/{match_id}/resign",
        headers={"Authorization": f"Bearer {token}"},
    )


def match_over(server: LiveServer, game: str, match_id: str) -> dict[str, Any]:
    """The match's ``match_over`` event, as a spectator sees it."""
    events = events_of(api_of(server), game, match_id)
    return next(e for e in events if e["type"] == "match_over")


def archive_due(server: LiveServer) -> int:
    """What a worker's archiver does: archive every match due, now; how many."""
    extensions = server.app.extensions
    archiver = Archiver(
        server.matches,
        extensions["ludotheque.archive_queue"],
        extensions["ludotheque.archive"],
        extensions["ludotheque.record_keys"],
        finished_ttl=3600,
    )
    for done in range(200):
        if archiver.run_once() is not None:
            return done
    raise AssertionError("the archiver never ran out of due matches")
