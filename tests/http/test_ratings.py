"""Ratings over HTTP (issue 37, points 2 to 4), against real Redis and SQL:
a rated match's match_over event carries each player's rating before and
after it; the leaderboard lists players once they have enough rated
matches (bots also on their own board), ``?around=me`` finds the caller;
a player's history lists every change with its match, newest first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.domain.fairness import verify
from tests.contract.conformance import component, errors
from tests.support.matches import events_of
from tests.support.ranked import (
    api_of,
    archive_due,
    fresh_ratings,
    match_over,
    new_player,
    play_to_the_end,
    rated_match,
    resign,
)
from tests.support.servers import LiveServer, bot_workers

MIN_MATCHES = 2
ENTRY_KEYS = {"rank", "player", "name", "bot", "rating", "mu", "sigma", "matches", "provisional"}
RATING_KEYS = {"rating", "mu", "sigma", "matches", "provisional"}


@pytest.fixture(scope="module")
def server(module_redis: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": module_redis, "DATABASE_URL": module_db_url}
    with LiveServer(config | {"LEADERBOARD_MIN_MATCHES": MIN_MATCHES}) as live:
        fresh_ratings(live.app.extensions["ludotheque.matches"].store.client)
        yield live


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def board(server: LiveServer, game: str = "dekal", token: str | None = None, **params: Any):
    return server.http.get(
        f"{server.base}/v1/games/{game}/leaderboard",
        params=params,
        headers=bearer(token) if token else {},
    )


def whole_board(server: LiveServer, **params: Any) -> list[dict[str, Any]]:
    """Every entry of the leaderboard, page by page."""
    entries, after = [], 0
    while after is not None:
        page = board(server, limit=100, after=after, **params)
        assert page.status_code == 200, page.text
        entries += page.json()["entries"]
        after = page.json()["next"]
    return entries


def test_a_rated_match_over_event_carries_each_players_rating_before_and_after(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    final = play_to_the_end(server, "dekal", match_id, [ada, bob])
    assert final["status"] == "finished" and final["rated"] is True
    over = match_over(server, "dekal", match_id)
    ratings = over["ratings"]
    assert [(r["seat"], r["player"]) for r in ratings] == [(0, ada["id"]), (1, bob["id"])]
    for change in ratings:
        assert set(change) == {"seat", "player", "before", "after"}
        assert set(change["before"]) == set(change["after"]) == RATING_KEYS
        assert change["before"] == {
            "rating": 1000,
            "mu": 25.0,
            "sigma": pytest.approx(25 / 3),
            "matches": 0,
            "provisional": True,
        }
        assert change["after"]["matches"] == 1 and change["after"]["sigma"] < 25 / 3
    winners = final["outcome"]["winners"]
    if len(winners) == 1:  # (a draw moves nobody's mu)
        for change in ratings:
            assert (change["after"]["mu"] > 25.0) is (change["seat"] in winners)
    # every event as the contract says, match_over with its ratings included
    for event in events_of(api_of(server), "dekal", match_id):
        assert errors(component("DekalEvent"), event) == [], event
    # the signed record leaves the ratings out of its replayed events: it verifies
    record = server.http.get(f"{server.base}/v1/games/dekal/matches/{match_id}/record")
    assert record.status_code == 200 and verify(record.json()) == []
    # applied to Redis at once: the next rated match starts from there
    again = rated_match(server, "dekal", [bob, ada])
    assert resign(server, "dekal", again, bob["token"]).status_code == 200
    for event in events_of(api_of(server), "dekal", again):  # ended early: no scores
        assert errors(component("DekalEvent"), event) == [], event
    second = {r["player"]: r for r in match_over(server, "dekal", again)["ratings"]}
    by_player = {r["player"]: r for r in ratings}
    for player in (ada["id"], bob["id"]):
        assert second[player]["before"] == by_player[player]["after"]
        assert second[player]["after"]["matches"] == 2


def test_only_players_seats_are_rated_when_a_bot_plays_beside_them(server):
    """A built-in bot has no rating; the match may end on the bot's own turn
    (a write the server makes, not a request): it is rated all the same."""
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    seats = [ada, {"bot": "random"}, bob]
    match_id = rated_match(server, "dekal", seats)
    with bot_workers(server.app):
        final = play_to_the_end(server, "dekal", match_id, seats)
    assert final["status"] == "finished"
    ratings = match_over(server, "dekal", match_id)["ratings"]
    assert [(r["seat"], r["player"]) for r in ratings] == [(0, ada["id"]), (2, bob["id"])]
    assert all(r["after"]["matches"] == r["before"]["matches"] + 1 for r in ratings)


def test_players_are_listed_after_enough_rated_matches_best_first(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    first = rated_match(server, "dekal", [ada, bob])
    resign(server, "dekal", first, bob["token"])
    listed = {e["player"] for e in whole_board(server)}
    assert ada["id"] not in listed and bob["id"] not in listed  # one rated match: not yet
    missing = board(server, token=ada["token"], around="me")
    assert missing.status_code == 404 and missing.json()["code"] == "not_on_leaderboard"
    assert f"after {MIN_MATCHES} rated matches (you have 1)" in missing.json()["detail"]
    second = rated_match(server, "dekal", [bob, ada])
    resign(server, "dekal", second, bob["token"])
    entries = whole_board(server)
    mine = {e["player"]: e for e in entries if e["player"] in (ada["id"], bob["id"])}
    assert set(mine) == {ada["id"], bob["id"]}
    for entry in mine.values():
        assert set(entry) == ENTRY_KEYS and entry["bot"] is False and entry["matches"] == 2
    assert mine[ada["id"]]["name"] == "Ada" and mine[ada["id"]]["rank"] < mine[bob["id"]]["rank"]
    assert mine[ada["id"]]["rating"] > 1000 > mine[bob["id"]]["rating"]
    assert [e["rank"] for e in entries] == sorted(e["rank"] for e in entries)
    ratings = [e["rating"] for e in entries]
    assert ratings == sorted(ratings, reverse=True)
    page = board(server, limit=1)
    assert errors(component("Leaderboard"), page.json()) == []
    assert page.json()["min_matches"] == MIN_MATCHES and page.json()["bots_only"] is False
    assert page.headers["Cache-Control"] == "public, max-age=5"
    assert len(page.json()["entries"]) == 1 and page.json()["next"] == 1


def test_around_me_is_the_page_around_the_callers_rank(server):
    players = [new_player(server, f"P{i}") for i in range(2)]
    for _ in range(MIN_MATCHES):
        match_id = rated_match(server, "dekal", players)
        resign(server, "dekal", match_id, players[1]["token"])
    around = board(server, token=players[1]["token"], around="me", limit=5)
    assert around.status_code == 200, around.text
    assert around.headers["Cache-Control"].startswith("private")
    entries = around.json()["entries"]
    me = next(e for e in entries if e["player"] == players[1]["id"])
    ranks = [e["rank"] for e in entries]
    assert ranks == list(range(ranks[0], ranks[0] + len(ranks)))
    assert me["rank"] - ranks[0] <= 2  # in the window's middle, or near the top


def test_bot_accounts_have_a_board_of_their_own(server):
    bots = [new_player(server, f"Bot {i}", bot=True) for i in range(2)]
    person = new_player(server, "Cy")
    for _ in range(MIN_MATCHES):
        resign(server, "dekal", rated_match(server, "dekal", [*bots]), bots[0]["token"])
        resign(server, "dekal", rated_match(server, "dekal", [person, bots[1]]), person["token"])
    only = whole_board(server, bots="only")
    assert {bots[0]["id"], bots[1]["id"]} <= {e["player"] for e in only}
    assert all(e["bot"] for e in only) and person["id"] not in {e["player"] for e in only}
    everyone = {e["player"]: e for e in whole_board(server)}
    assert everyone[bots[1]["id"]]["bot"] is True and everyone[person["id"]]["bot"] is False
    around = board(server, token=person["token"], around="me", bots="only")
    assert around.status_code == 404 and "bot accounts" in around.json()["detail"]


def test_a_players_history_lists_every_change_newest_first(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    ids = []
    for loser in (bob, ada, bob):
        ids.append(rated_match(server, "dekal", [ada, bob]))
        resign(server, "dekal", ids[-1], loser["token"])
    archive_due(server)
    url = f"{server.base}/v1/players/{ada['id']}/ratings"
    answer = server.http.get(url, params={"game": "dekal"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["Cache-Control"] == "public, max-age=5"
    history = answer.json()
    assert errors(component("PlayerRatings"), history) == []
    assert set(history) == {"player", "ratings", "changes", "next"}
    assert history["ratings"]["dekal"]["matches"] == 3
    changes = history["changes"]
    assert [c["match"] for c in changes] == ids[::-1]
    assert [c["rank"] for c in changes] == [1, 2, 1]
    assert changes[0]["after"] == history["ratings"]["dekal"]
    assert [c["after"]["matches"] for c in changes] == [3, 2, 1]
    assert changes[1]["after"]["rating"] < changes[1]["before"]["rating"]
    pages, cursor = [], None
    while True:
        page = server.http.get(url, params={"limit": 1} | ({"cursor": cursor} if cursor else {}))
        pages += page.json()["changes"]
        cursor = page.json()["next"]
        if cursor is None:
            break
    assert [c["match"] for c in pages] == ids[::-1]
    other = server.http.get(url, params={"game": "pacal"}).json()
    assert other["ratings"] == {} and other["changes"] == []


def test_a_deleted_player_leaves_the_leaderboard(server):
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    for _ in range(MIN_MATCHES):
        resign(server, "dekal", rated_match(server, "dekal", [ada, bob]), bob["token"])
    assert ada["id"] in {e["player"] for e in whole_board(server)}
    gone = server.http.delete(f"{server.base}/v1/players/me", headers=bearer(ada["token"]))
    assert gone.status_code == 204
    assert ada["id"] not in {e["player"] for e in whole_board(server)}
    assert bob["id"] in {e["player"] for e in whole_board(server)}
