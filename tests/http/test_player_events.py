"""A player's own events (``GET /v1/players/me/events``), against real
Redis and a real database, with a matchmaker beside the server: each of two
players matched learns its match and seat on its event stream, by a long
poll the push hub wakes; then its rating change; by cursor; its own only."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service.background.matchmaker import Matchmaker
from tests.support.queue import bearer, guest, join, matchmaking, queue_server
from tests.support.ranked import resign
from tests.support.servers import LiveServer
from tests.support.waiting import wait_until

RUN = uuid.uuid4().hex[:8]
PRESETS = {"dekal": {f"ev{RUN}": {"players": 2}, f"lone{RUN}": {"players": 3}}}


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    with queue_server(redis_url, module_db_url, PRESETS, QUEUE_IDLE_S=1) as live:
        yield live


@pytest.fixture(scope="module")
def matchmaker(server: LiveServer) -> Iterator[Matchmaker]:
    with matchmaking(server) as found:
        yield found


def events(server: LiveServer, token: str, after: int = 0, wait: float = 0) -> Any:
    return server.http.get(
        server.url("/v1/players/me/events"),
        params={"after": after, "wait": wait},
        headers=bearer(token),
    )


def player_id(server: LiveServer, token: str) -> str:
    return server.http.get(server.url("/v1/players/me"), headers=bearer(token)).json()["id"]


def matched_by_event_long_poll(
    server: LiveServer, preset: str
) -> tuple[list[str], dict[str, str], dict[str, Any]]:
    """Two guests long-poll their events, then queue together: the tokens,
    each one's ticket, and each one's answer (checked: woken by the match)."""
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    # the hub's periodic check slowed: only the matchmaker's wake-up can end the wait in time
    hub = server.app.extensions["ludotheque.live"].hub
    hub.check_s = 30
    time.sleep(1.1)
    try:
        answers: dict[str, Any] = {}
        polls = [
            threading.Thread(target=lambda t=t: answers.__setitem__(t, events(server, t, 0, 20)))
            for t in (ada, bob)
        ]
        for poll in polls:
            poll.start()
        time.sleep(0.3)
        started = time.monotonic()
        tickets = {t: join(server, t, preset).json()["id"] for t in (ada, bob)}
        for poll in polls:
            poll.join()
        assert time.monotonic() - started < 5, "woken by the match, not by the wait's end"
    finally:
        hub.check_s = 1.0
    return [ada, bob], tickets, answers


def test_both_players_learn_their_match_and_seat_by_long_poll_then_their_rating(
    server, matchmaker
):
    (ada, bob), tickets, answers = matched_by_event_long_poll(server, f"ev{RUN}")
    seats = {}
    for token in (ada, bob):
        answer = answers[token]
        assert answer.status_code == 200, answer.text
        assert answer.headers["Cache-Control"] == "private, no-cache"
        (event,) = answer.json()["events"]
        assert event["type"] == "ticket_matched"
        assert event["ticket"] == tickets[token]
        assert (event["game"], event["preset"]) == ("dekal", f"ev{RUN}")
        assert answer.json()["next"] == event["index"] > 0
        seats[token] = event["match"]
    assert seats[ada]["id"] == seats[bob]["id"]
    assert {seats[ada]["seat"], seats[bob]["seat"]} == {0, 1}
    # the ticket's long poll says the same
    ticket = server.http.get(server.url(f"/v1/queue/tickets/{tickets[ada]}"), headers=bearer(ada))
    assert ticket.json()["match"] == seats[ada]

    # the match ends: each learns its rating change, after its cursor
    after = answers[ada].json()["next"]
    assert events(server, ada, after).json()["events"] == []
    assert resign(server, "dekal", seats[bob]["id"], bob).status_code == 200
    rated = events(server, ada, after, 10).json()
    (change,) = rated["events"]
    assert change["type"] == "rated"
    assert (change["game"], change["match"]) == ("dekal", seats[ada]["id"])
    assert change["after"]["mu"] > change["before"]["mu"]
    assert change["after"]["matches"] == change["before"]["matches"] + 1 == 1
    assert rated["next"] == change["index"] > after
    lost = events(server, bob, answers[bob].json()["next"]).json()["events"]
    assert [e["type"] for e in lost] == ["rated"]
    assert lost[0]["after"]["mu"] < lost[0]["before"]["mu"]
    # the whole stream again, from the start, oldest first
    every = events(server, ada).json()["events"]
    assert [e["type"] for e in every] == ["ticket_matched", "rated"]
    # the archiver applies the ratings again: no second event
    server.app.extensions["ludotheque.ratings"].apply(
        "dekal", server.matches.store.load(seats[ada]["id"]).match["ratings"], seats[ada]["id"]
    )
    assert [e["type"] for e in events(server, ada).json()["events"]] == ["ticket_matched", "rated"]


def test_a_ticket_that_expires_is_an_event(server, matchmaker):
    ada = guest(server)
    ticket = join(server, ada, f"lone{RUN}").json()["id"]
    found = wait_until(lambda: events(server, ada, 0, 5).json()["events"], timeout=10)
    assert found[0] == {
        "type": "ticket_expired",
        "ticket": ticket,
        "game": "dekal",
        "preset": f"lone{RUN}",
        "index": found[0]["index"],
    }


def test_a_long_poll_with_nothing_new_answers_empty_after_its_wait(server):
    ada = guest(server)
    started = time.monotonic()
    answer = events(server, ada, 0, 0.5)
    assert answer.status_code == 200
    assert answer.json() == {"events": [], "next": 0}
    assert 0.4 < time.monotonic() - started < 3


def test_only_a_player_token_reads_them(server):
    operator = server.app.extensions["ludotheque.players"]
    _, app_key = operator.create_app("events")
    refused = events(server, app_key)
    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "wrong_token_kind"
    match = server.http.post(
        server.url("/v1/games/dekal/matches"), json={"players": [{"name": "A"}, {"name": "B"}]}
    ).json()
    seat = events(server, match["seats"][0]["token"])
    assert seat.status_code == 401, seat.text
    assert seat.json()["code"] in ("token_required", "invalid_token")
    nobody = server.http.get(server.url("/v1/players/me/events"))
    assert nobody.status_code == 401
    assert nobody.json()["code"] == "token_required"


def test_another_players_events_are_never_visible(server):
    ada, bob = guest(server), guest(server)
    kept = server.app.extensions["ludotheque.player_events"]
    kept.append(player_id(server, bob), {"type": "ticket_expired", "ticket": "x"})
    assert events(server, ada).json()["events"] == []
    assert [e["ticket"] for e in events(server, bob).json()["events"]] == ["x"]


def test_the_events_wake_their_long_polls_on_a_redis_cluster(cluster_url, tmp_path):
    """A player's stream and its wake-up channel share a slot: on a cluster
    the sharded wake-up ends both long polls."""
    from service.store.database import migrate
    from tests.support import databases

    url = databases.sqlite_url(tmp_path)
    migrate(url)
    presets = {"dekal": {f"c{RUN}": {"players": 2}}}
    with (
        queue_server(cluster_url, url, presets, REDIS_CLUSTER=True) as live,
        matchmaking(live),
    ):
        tokens, _, answers = matched_by_event_long_poll(live, f"c{RUN}")
        found = [answers[t].json()["events"][0]["match"] for t in tokens]
        assert found[0]["id"] == found[1]["id"]
        assert {found[0]["seat"], found[1]["seat"]} == {0, 1}
