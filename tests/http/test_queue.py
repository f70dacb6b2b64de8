"""The ranked queue over HTTP, against real Redis and a real database, with
a matchmaker running beside the server as ``ludotheque worker`` runs it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from service.background.matchmaker import Matchmaker
from tests.support.queue import bearer, guest, join, long_poll_all, matchmaking, ticket
from tests.support.servers import LiveServer, bot_workers
from tests.support.waiting import wait_until

RUN = uuid.uuid4().hex[:8]  # this run's presets: no ticket of another run is seen
PRESETS = {
    "dekal": {
        f"pair{RUN}": {"players": 2, "turn_timeout_s": 60},
        f"leave{RUN}": {"players": 2},
        f"expire{RUN}": {"players": 3},
        f"bots{RUN}": {"players": 2, "bot_after_s": 0.5, "turn_timeout_s": 30},
        f"http{RUN}": {"players": 2},
    },
    "pacal": {f"p{RUN}": {"players": 2}},
}


@pytest.fixture(scope="module")
def server(module_redis: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {
        "REDIS_URL": module_redis,
        "DATABASE_URL": module_db_url,
        "QUEUE_PRESETS": PRESETS,
        "QUEUE_IDLE_S": 2,
    }
    with LiveServer(config) as live:
        yield live


@pytest.fixture(scope="module")
def matchmaker(server: LiveServer) -> Iterator[Matchmaker]:
    with matchmaking(server) as found:
        yield found


def test_the_presets_are_listed_with_their_waiting_tickets(server):
    answer = server.http.get(server.url("/v1/games/dekal/queue"))
    assert answer.status_code == 200, answer.text
    presets = {p["name"]: p for p in answer.json()["presets"]}
    assert presets[f"bots{RUN}"]["bot_after_s"] == 0.5
    assert presets[f"pair{RUN}"]["turn_timeout_s"] == 60
    assert presets[f"pair{RUN}"]["options"]["turn_timeout_s"] == 60
    queue = server.app.extensions["ludotheque.queue"]
    assert all(p["waiting"] == queue.count("dekal", name) for name, p in presets.items())
    assert server.http.get(server.url("/v1/games/nope/queue")).status_code == 404


def test_two_players_queue_and_both_learn_their_match_and_seat_by_long_poll(server, matchmaker):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    # Ada's long poll waits before the second ticket exists: the match's
    # wake-up ends it (the hub's periodic check, slowed, cannot in time)
    hub = server.app.extensions["ludotheque.live"].hub
    hub.check_s = 30
    time.sleep(1.1)  # the check's current sleep (1 s) ends: the next is 30 s
    first = join(server, ada, f"pair{RUN}")
    assert first.status_code == 201, first.text
    assert first.json()["status"] == "waiting"
    assert first.json()["match"] is None
    started = time.monotonic()
    answers: list[Any] = []
    waiting = threading.Thread(
        target=lambda: answers.append(ticket(server, ada, first.json()["id"], 20))
    )
    waiting.start()
    time.sleep(0.3)
    second = join(server, bob, f"pair{RUN}")
    assert second.status_code == 201, second.text
    bob_sees = ticket(server, bob, second.json()["id"], 20).json()
    waiting.join()
    ada_sees = answers[0].json()
    assert time.monotonic() - started < 5, "woken by the match, not by the wait's end"
    hub.check_s = 1.0
    assert ada_sees["status"] == bob_sees["status"] == "matched"
    assert ada_sees["match"]["id"] == bob_sees["match"]["id"]
    assert {ada_sees["match"]["seat"], bob_sees["match"]["seat"]} == {0, 1}
    match_id, seat = ada_sees["match"]["id"], ada_sees["match"]["seat"]
    seen = server.http.get(server.url(f"/v1/games/dekal/matches/{match_id}"), headers=bearer(ada))
    assert seen.status_code == 200, seen.text
    match = seen.json()
    assert match["rated"] is True
    assert match["status"] == "active"
    assert match["options"]["turn_timeout_s"] == 60
    assert match["seats"][seat]["name"] == "Ada"
    stored = server.matches.store.load(match_id).match
    assert stored["creator"] is None, "charged to the queue, not an address"


def test_one_ticket_per_player_per_game(server, matchmaker):
    ada = guest(server)
    first = join(server, ada, f"expire{RUN}")
    assert first.status_code == 201
    again = join(server, ada, f"leave{RUN}")
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "already_queued"
    assert again.json()["ticket"] == first.json()["id"]
    # another game is another queue
    assert join(server, ada, f"p{RUN}", game="pacal").status_code == 201


def test_a_ticket_left_is_never_matched(server, matchmaker):
    ada, bob = guest(server), guest(server)
    mine = join(server, ada, f"leave{RUN}").json()
    left = server.http.delete(server.url(f"/v1/queue/tickets/{mine['id']}"), headers=bearer(ada))
    assert left.status_code == 200, left.text
    assert left.json()["status"] == "left"
    other = join(server, bob, f"leave{RUN}").json()
    assert ticket(server, bob, other["id"], 1.5).json()["status"] == "waiting"
    assert ticket(server, ada, mine["id"]).json()["status"] == "left"
    # and once left, the player may queue again
    assert join(server, ada, f"leave{RUN}").status_code == 201


def test_a_ticket_nobody_asks_for_expires(server, matchmaker):
    ada, bob, cy = guest(server), guest(server), guest(server)
    idle = join(server, ada, f"expire{RUN}").json()
    assert idle["expires_in_s"] == 2
    time.sleep(2.5)
    # two more join: the idle one would have made three, but it expired
    others = [join(server, t, f"expire{RUN}").json() for t in (bob, cy)]
    assert ticket(server, ada, idle["id"]).json()["status"] == "expired"
    assert all(
        ticket(server, t, o["id"]).json()["status"] == "waiting"
        for t, o in zip((bob, cy), others, strict=True)
    )
    # expired: the player may queue again
    assert join(server, ada, f"expire{RUN}").status_code == 201


def test_a_lone_ticket_plays_house_bots_after_bot_after_s(server, matchmaker):
    ada = guest(server)
    mine = join(server, ada, f"bots{RUN}").json()
    found = ticket(server, ada, mine["id"], 10).json()
    assert found["status"] == "matched", found
    match_id = found["match"]["id"]
    match = server.matches.store.load(match_id).match
    assert match["rated"] is True
    other = match["seats"][1 - found["match"]["seat"]]
    assert other["bot"] in ("random", "greedy", "mcts")
    assert other.get("bot_account") is True
    assert other["player"] is not None
    # the house bot plays its turns (a bot worker): in Dékal every seat reveals first
    version = server.matches.store.load(match_id).version
    with bot_workers(server.app):
        wait_until(lambda: server.matches.store.load(match_id).version > version, timeout=10)


def test_no_queueing_while_in_a_live_rated_match(server, matchmaker):
    ada, bob = guest(server), guest(server)
    tickets = [join(server, t, f"pair{RUN}").json()["id"] for t in (ada, bob)]
    seen = long_poll_all(server, list(zip((ada, bob), tickets, strict=True)))
    assert all(s.json()["status"] == "matched" for s in seen)
    again = join(server, ada, f"pair{RUN}")
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "in_ranked_match"
    assert again.json()["match"] == seen[0].json()["match"]["id"]


def http_bot_matched(server: LiveServer) -> tuple[str, dict[str, Any]]:
    """A bot account queued with a ``bot_url``, matched with a person: its
    player id, and the match."""
    bot, token = server.app.extensions["ludotheque.players"].create("Webby", bot=True)
    url = "https://bots.example.com/dekal"
    queued = join(server, token, f"http{RUN}", bot_url=url)
    assert queued.status_code == 201, queued.text
    assert queued.json()["bot_url"] == url
    ada = guest(server)
    other = join(server, ada, f"http{RUN}").json()
    found = ticket(server, token, queued.json()["id"], 10).json()
    assert found["status"] == "matched", found
    assert ticket(server, ada, other["id"], 10).json()["status"] == "matched"
    match = server.matches.store.load(found["match"]["id"]).match
    return bot["id"], match["seats"][found["match"]["seat"]]


def test_an_http_bot_enters_the_ladder_with_its_bot_url(server, matchmaker):
    _, seat = http_bot_matched(server)
    assert seat["bot"] == "http"
    assert seat["bot_url"] == "https://bots.example.com/dekal"


def test_an_http_bots_seat_is_its_bot_accounts(server, matchmaker):
    bot_id, seat = http_bot_matched(server)
    assert seat.get("player") == bot_id


def test_the_queue_matches_and_wakes_its_long_polls_on_a_redis_cluster(cluster_url, tmp_path):
    """Every queue's keys in one slot, the ticket's wake-up on its sharded
    channel: two players matched on a cluster learn it by long poll."""
    from service.store.database import migrate
    from tests.support import databases

    url = databases.sqlite_url(tmp_path)
    migrate(url)
    config = {
        "REDIS_URL": cluster_url,
        "REDIS_CLUSTER": True,
        "DATABASE_URL": url,
        "QUEUE_PRESETS": {"dekal": {f"c{RUN}": {"players": 2}}},
    }
    with LiveServer(config) as live, matchmaking(live):
        # only the wake-up can end the wait in time: the hub's periodic check is slowed
        live.app.extensions["ludotheque.live"].hub.check_s = 30
        time.sleep(1.1)  # the check's current sleep (1 s) ends: the next is 30 s
        tokens = [guest(live, "Ada"), guest(live, "Bob")]
        first = join(live, tokens[0], f"c{RUN}").json()["id"]
        started = time.monotonic()
        answers: list[Any] = []
        waiting = threading.Thread(
            target=lambda: answers.append(ticket(live, tokens[0], first, 20))
        )
        waiting.start()
        time.sleep(0.3)
        second = join(live, tokens[1], f"c{RUN}").json()["id"]
        assert ticket(live, tokens[1], second, 20).json()["status"] == "matched"
        waiting.join()
        assert answers[0].json()["status"] == "matched"
        assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    "presets, named",
    [
        ('{"chess": {"2p": {"players": 2}}}', "no game 'chess'"),
        ('{"dekal": {"9p": {"players": 9}}}', "dekal takes"),
        ('{"dekal": {"x": {"players": 2, "options": {"nope": 1}}}}', "options"),
        ('{"dekal": {"x": {"players": 2, "bot_after_s": -1}}}', "bot_after_s"),
        ('{"dekal": {"a b": {"players": 2}}}', "name"),
        ("/no/such/file.json", "neither"),
    ],
)
def test_a_malformed_preset_stops_the_process_naming_it(presets, named):
    from service.settings import Malformed, load

    with pytest.raises(Malformed) as refused:
        load({"LUDOTHEQUE_QUEUE_PRESETS": presets})
    (problem,) = refused.value.problems
    assert problem.startswith("LUDOTHEQUE_QUEUE_PRESETS: ") and named in problem, problem


def test_presets_may_be_read_from_a_file(tmp_path):
    from service.http.queue import presets_of
    from service.settings import load
    from service.settings.presets import presets_in

    path = tmp_path / "presets.json"
    path.write_text('{"gaudi": {"duel": {"players": 2, "turn_timeout_s": 90}}}')
    text = load({"LUDOTHEQUE_QUEUE_PRESETS": str(path)}).queue_presets
    (preset,) = presets_of(presets_in(text))["gaudi"].values()
    assert (preset.name, preset.players, preset.options["turn_timeout_s"]) == ("duel", 2, 90)
