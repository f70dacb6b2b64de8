"""Hostile clients of the ranked queue (issue 37, points 6 and 9):
flooding, another player's ticket, the wrong kind of token, dodging, a
player matched with itself, the same pair again and again."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from service.background.matchmaker import Matchmaker
from service.store.queue import mine_key
from tests.support.queue import bearer, guest, join, long_poll_all, matchmaking, ticket
from tests.support.servers import LiveServer

RUN = uuid.uuid4().hex[:8]
PRESETS = {
    "dekal": {
        f"flood{RUN}": {"players": 2},
        f"duel{RUN}": {"players": 2},
        f"self{RUN}": {"players": 2},
        f"four{RUN}": {"players": 2},
    }
}


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url, "QUEUE_PRESETS": PRESETS}
    with LiveServer(config) as live:
        yield live


def test_one_player_flooding_the_queue_holds_one_ticket(server):
    """Fifty joins at once from one player: one ticket, 49 x 409."""
    ada = guest(server)
    codes: list[int] = []

    def flood() -> None:
        for _ in range(5):
            codes.append(join(server, ada, f"flood{RUN}").status_code)

    threads = [threading.Thread(target=flood) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(set(codes)) == [201, 409]
    assert codes.count(201) == 1
    queue = server.app.extensions["ludotheque.queue"]
    assert queue.count("dekal", f"flood{RUN}") == 1
    for waiting in queue.waiting("dekal", f"flood{RUN}"):  # (the module runs once per database)
        queue.leave("dekal", f"flood{RUN}", waiting["id"])


def test_another_players_ticket_is_404_as_if_it_did_not_exist(server):
    ada, eve = guest(server), guest(server, "Eve")
    mine = join(server, ada, f"duel{RUN}").json()
    for answer in (
        ticket(server, eve, mine["id"]),
        server.http.delete(server.url(f"/v1/queue/tickets/{mine['id']}"), headers=bearer(eve)),
        ticket(server, eve, uuid.uuid4().hex),
        ticket(server, eve, "ffff"),
    ):
        assert answer.status_code == 404, answer.text
        assert answer.json()["code"] == "ticket_not_found"
    assert ticket(server, ada, mine["id"]).json()["status"] == "waiting", "Eve left nothing"
    server.http.delete(server.url(f"/v1/queue/tickets/{mine['id']}"), headers=bearer(ada))


def test_a_seat_token_or_an_app_key_cannot_queue(server):
    created = server.http.post(
        server.url("/v1/games/dekal/matches"), json={"players": [{"name": "A"}, {"name": "B"}]}
    ).json()
    seat_token = created["seats"][0]["token"]
    answer = join(server, seat_token, f"duel{RUN}")
    assert answer.status_code == 401, answer.text
    assert answer.json()["code"] == "token_required"
    _, key = server.app.extensions["ludotheque.players"].create_app("Queue test")
    answer = join(server, key, f"duel{RUN}")
    assert answer.status_code == 403, answer.text
    assert answer.json()["code"] == "wrong_token_kind"
    answer = server.http.post(server.url("/v1/games/dekal/queue"), json={"preset": f"duel{RUN}"})
    assert answer.status_code == 401
    # a person's account may not enter an HTTP bot
    answer = join(server, guest(server), f"duel{RUN}", bot_url="https://bots.example.com/x")
    assert answer.status_code == 403, answer.text
    assert answer.json()["code"] == "bot_accounts_only"


def matched_pair(server: LiveServer, preset: str) -> tuple[list[str], list[dict]]:
    tokens = [guest(server, "Ada"), guest(server, "Bob")]
    ids = [join(server, t, preset).json()["id"] for t in tokens]
    with matchmaking(server):
        seen = [a.json() for a in long_poll_all(server, list(zip(tokens, ids, strict=True)))]
    assert all(s["status"] == "matched" for s in seen), seen
    return tokens, seen


def test_dodging_a_matched_player_leaving_at_once_resigns_and_ranks_last(server):
    tokens, seen = matched_pair(server, f"duel{RUN}")
    dodger, match_id, seat = tokens[0], seen[0]["match"]["id"], seen[0]["match"]["seat"]
    # leaving the queue once matched does not leave the match
    left = server.http.delete(
        server.url(f"/v1/queue/tickets/{seen[0]['id']}"), headers=bearer(dodger)
    )
    assert left.status_code == 409, left.text
    assert left.json()["code"] == "ticket_matched"
    resigned = server.http.post(
        server.url(f"/v1/games/dekal/matches/{match_id}/resign"), headers=bearer(dodger)
    )
    assert resigned.status_code == 200, resigned.text
    match = server.http.get(server.url(f"/v1/games/dekal/matches/{match_id}")).json()
    assert match["status"] == "finished"
    assert match["rated"] is True
    assert match["outcome"]["ranking"][-1] == [seat], "the dodger ranks last"
    assert match["outcome"]["winners"] == [1 - seat]


def test_dodging_by_abort_is_refused_in_a_rated_match(server):
    tokens, seen = matched_pair(server, f"duel{RUN}")
    match_id = seen[0]["match"]["id"]
    aborted = server.http.post(
        server.url(f"/v1/games/dekal/matches/{match_id}/abort"), headers=bearer(tokens[0])
    )
    assert aborted.status_code == 409, aborted.text


def test_a_player_is_never_matched_with_itself(server):
    """Two tickets of one player in one queue (its index forgotten between
    two joins, as a race might): the matchmaker never seats it twice."""
    ada, p = guest(server), f"self{RUN}"
    queue = server.app.extensions["ludotheque.queue"]
    first = join(server, ada, p).json()
    player_id = queue.poll(first["id"], p, "dekal", renew=False)["player"]
    queue.client.delete(mine_key(player_id))
    second = join(server, ada, p)
    assert second.status_code == 201
    presets = server.app.extensions["ludotheque.queue_presets"]
    matchmaker = Matchmaker(server.matches, queue, {"dekal": {p: presets["dekal"][p]}})
    assert matchmaker.run_once() == 0
    assert queue.count("dekal", p) == 2
    for ticket_id in (first["id"], second.json()["id"]):
        queue.leave("dekal", p, ticket_id)


def test_the_same_pair_is_not_matched_again_while_others_wait(server):
    """Four players of one strength, again and again: each next match pairs
    strangers while there are some."""
    queue = server.app.extensions["ludotheque.queue"]
    preset = f"four{RUN}"
    presets = server.app.extensions["ludotheque.queue_presets"]
    matchmaker = Matchmaker(server.matches, queue, {"dekal": {preset: presets["dekal"][preset]}})
    players = [uuid.uuid4().hex for _ in range(4)]
    pairs = []
    for _ in range(3):
        tickets = {}
        for player_id in players:
            seat = {"id": player_id, "name": "P", "bot": False, "holder": "h" + player_id}
            made = queue.join("dekal", preset, player_id, {"seat_player": _json(seat)})
            tickets[made["id"]] = player_id
            time.sleep(0.01)
        assert matchmaker.run_once() == 2
        round_pairs = set()
        for ticket_id, player_id in tickets.items():
            found = queue.poll(ticket_id, preset, "dekal", renew=False)
            round_pairs.add((found["match"], player_id))
        by_match: dict[str, set[str]] = {}
        for match_id, player_id in round_pairs:
            by_match.setdefault(match_id, set()).add(player_id)
        pairs.extend(frozenset(p) for p in by_match.values())
        # the round's matches end, as far as the queue's rule (one live rated
        # match per player and game) sees: their players queue again
        for match_id, player_id in round_pairs:
            assert queue.swap_ranked(player_id, "dekal", match_id, "")
    assert len(set(pairs)) == len(pairs) == 6, "every pair of the four, once each"


def _json(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode()


def test_ticket_long_polls_count_against_the_follower_caps(redis_url, module_db_url):
    """A player's long polls on its ticket, held at once, are followers: past
    the per-token cap, 429 `too_many_followers`; the others are answered."""
    config = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": module_db_url,
        "QUEUE_PRESETS": PRESETS,
        "FOLLOWERS_PER_TOKEN": 2,
    }
    with LiveServer(config) as live:
        ada = guest(live)
        mine = join(live, ada, f"duel{RUN}").json()["id"]
        codes: list[int] = []

        def poll() -> None:
            codes.append(ticket(live, ada, mine, 2).status_code)

        threads = [threading.Thread(target=poll) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(codes) == [200, 200, 429, 429], codes
        live.http.delete(live.url(f"/v1/queue/tickets/{mine}"), headers=bearer(ada))
