"""The adversary's findings on ranked play (issue 37), each against a real
server with a database and a matchmaker thread, as a client sees it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.support.queue import bearer, guest, join, long_poll_all, matchmaking, ticket
from tests.support.ranked import fresh_ratings
from tests.support.servers import LiveServer

RUN = uuid.uuid4().hex[:8]
GHOST, THREE = f"ghost{RUN}", f"three{RUN}"
PRESETS = {"dekal": {GHOST: {"players": 2}, THREE: {"players": 3}}}


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": module_db_url,
        "QUEUE_PRESETS": PRESETS,
        "LEADERBOARD_MIN_MATCHES": 1,
    }
    with LiveServer(config) as live:
        fresh_ratings(live.app.extensions["ludotheque.matches"].store.client)
        yield live


def match_url(server: LiveServer, match_id: str) -> str:
    return server.url(f"/v1/games/dekal/matches/{match_id}")


def waiting(server: LiveServer, preset: str) -> int:
    presets = server.http.get(server.url("/v1/games/dekal/queue")).json()["presets"]
    return next(p["waiting"] for p in presets if p["name"] == preset)


def test_a_deleted_players_waiting_ticket_is_never_matched(server):
    """A player who leaves for good (DELETE /v1/players/me) while its ticket
    waits stays in the queue: the next player is matched with it, a seat
    nobody can ever play again (its tokens are gone), and the match is
    rated. The victim waits out the turn clock at every turn or resigns
    and loses rating to a deleted account."""
    ghost, victim = guest(server, "Ghost"), guest(server, "Victim")
    left = join(server, ghost, GHOST).json()
    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ghost))
    assert gone.status_code == 204, gone.text
    mine = join(server, victim, GHOST).json()
    with matchmaking(server):
        seen = ticket(server, victim, mine["id"], 3).json()
    try:
        assert seen["status"] == "waiting", (
            f"matched with a deleted player: {seen['match']} (its ticket {left['id']})"
        )
    finally:
        if seen["status"] == "waiting":
            server.http.delete(
                server.url(f"/v1/queue/tickets/{mine['id']}"), headers=bearer(victim)
            )
        else:
            server.http.post(
                match_url(server, seen["match"]["id"]) + "/resign", headers=bearer(victim)
            )


def test_resigning_a_rated_match_lets_one_queue_again(server):
    """queue.md: "Not while you play a ranked match of that game: 409
    in_ranked_match ... Finish it (or resign) first". A player who resigned
    a three-player rated match (the two others play on) is still refused."""
    tokens = [guest(server, name) for name in ("Ada", "Bob", "Cy")]
    ids = [join(server, t, THREE).json()["id"] for t in tokens]
    with matchmaking(server):
        seen = [a.json() for a in long_poll_all(server, list(zip(tokens, ids, strict=True)))]
    assert all(s["status"] == "matched" for s in seen), seen
    match_id = seen[0]["match"]["id"]
    resigned = server.http.post(match_url(server, match_id) + "/resign", headers=bearer(tokens[0]))
    assert resigned.status_code == 200, resigned.text
    assert server.http.get(match_url(server, match_id)).json()["status"] == "active"
    again = join(server, tokens[0], THREE)
    try:
        assert again.status_code == 201, again.text
    finally:
        if again.status_code == 201:
            server.http.delete(
                server.url(f"/v1/queue/tickets/{again.json()['id']}"), headers=bearer(tokens[0])
            )
        for token in tokens[1:]:
            server.http.post(match_url(server, match_id) + "/resign", headers=bearer(token))


def test_two_live_rated_matches_of_one_game_through_many_unrated_ones(server):
    """queue.md: "Not while you play a ranked match of that game: 409
    in_ranked_match". A player who holds a seat of a live rated match, then
    creates many ordinary matches of the same game (each with a second,
    named seat, so that they start and wait for no one), joins the queue
    again and is matched in a second rated match of the game at once."""
    ada, bob, cy = (guest(server, name) for name in ("Ada", "Bob", "Cy"))
    ids = [join(server, t, GHOST).json()["id"] for t in (ada, bob)]
    with matchmaking(server):
        seen = [a.json() for a in long_poll_all(server, [(ada, ids[0]), (bob, ids[1])])]
    assert all(s["status"] == "matched" for s in seen), seen
    first = seen[0]["match"]["id"]
    for _ in range(205):
        made = server.http.post(
            server.url("/v1/games/dekal/matches"),
            json={"players": [{"player": "me"}, {"name": "Friend"}]},
            headers=bearer(ada),
        )
        assert made.status_code == 201, made.text
    again = join(server, ada, GHOST)
    second = None
    if again.status_code == 201:  # and is it matched? Cy waits too
        mine = join(server, cy, GHOST).json()["id"]
        with matchmaking(server):
            answers = long_poll_all(server, [(ada, again.json()["id"]), (cy, mine)], wait=5)
        second = answers[0].json().get("match")
    try:
        assert again.status_code == 409, (
            f"joined again while in the live rated match {first}: {again.text};"
            f" then matched in {second}"
        )
        assert again.json()["code"] == "in_ranked_match"
    finally:
        if second is None and again.status_code == 201:
            server.http.delete(
                server.url(f"/v1/queue/tickets/{again.json()['id']}"), headers=bearer(ada)
            )
        if second is not None:
            server.http.post(match_url(server, second["id"]) + "/resign", headers=bearer(cy))
        server.http.post(match_url(server, first) + "/resign", headers=bearer(bob))
