"""A player's matches over HTTP (issue 36, point 4): ``GET
/v1/players/me/matches`` lists the waiting, active and finished ones (live
from Redis, archived from the archive), page by page, the same on every
device of the player and never another player's; on SQLite and PostgreSQL,
with a real archiver (in this process, as a worker runs it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import redis
from click.testing import CliRunner

from service.background.archiver import Archiver
from service.cli import main
from service.domain.signing import sign
from service.store import player_matches
from service.store.archive import Archive, Archived
from service.store.matches import match_key
from service.store.player_matches import index_key
from tests.support.servers import LiveServer

T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    # a finished match stays in Redis 1 s once archived: "Redis forgot it" is quick
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url, "FINISHED_TTL": 1}
    with LiveServer(config) as live:
        yield live


@pytest.fixture(scope="module")
def client(server: LiveServer) -> redis.Redis:
    return server.matches.store.client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def guest(server: LiveServer, name: str) -> dict[str, Any]:
    made = server.http.post(server.url("/v1/players"), json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()


def create(server: LiveServer, token: str, seats: list[dict[str, Any]]) -> str:
    made = server.http.post(
        server.url("/v1/games/dekal/matches"), json={"players": seats}, headers=bearer(token)
    )
    assert made.status_code == 201, made.text
    return made.json()["id"]


def join(server: LiveServer, token: str, match_id: str, seat: int) -> None:
    url = server.url(f"/v1/games/dekal/matches/{match_id}/seats/{seat}")
    joined = server.http.post(url, json={}, headers=bearer(token))
    assert joined.status_code == 201, joined.text


def resign(server: LiveServer, token: str, match_id: str) -> None:
    url = server.url(f"/v1/games/dekal/matches/{match_id}/resign")
    resigned = server.http.post(url, headers=bearer(token))
    assert resigned.status_code == 200, resigned.text
    assert resigned.json()["status"] == "finished"


def finished_between(server: LiveServer, first: dict, second: dict) -> str:
    """A Dékal match of ``first`` (seat 0) and ``second`` (seat 1), over:
    ``first`` resigned."""
    match_id = create(server, first["token"], [{"player": "me"}, {}])
    join(server, second["token"], match_id, 1)
    resign(server, first["token"], match_id)
    return match_id


def archive_due(server: LiveServer, finished_ttl: int = 1) -> None:
    """What a worker's archiver does: archive every match due, now (Redis
    keeps each ``finished_ttl`` longer)."""
    extensions = server.app.extensions
    archiver = Archiver(
        server.matches,
        extensions["ludotheque.archive_queue"],
        extensions["ludotheque.archive"],
        extensions["ludotheque.record_keys"],
        finished_ttl=finished_ttl,
    )
    for _ in range(100):
        if archiver.run_once() is not None:
            return
    raise AssertionError("the archiver never ran out of due matches")


def forgotten(client: redis.Redis, *match_ids: str) -> None:
    """Wait until Redis has forgotten ``match_ids`` (1 s after archiving)."""
    deadline = time.monotonic() + 10
    while any(client.exists(match_key(m)) for m in match_ids):
        assert time.monotonic() < deadline, "Redis kept an archived match"
        time.sleep(0.05)


def mine(server: LiveServer, token: str, **params: Any) -> list[dict[str, Any]]:
    """Every match of the player's list, following `next` to the end."""
    found: list[dict[str, Any]] = []
    cursor = None
    for _ in range(500):
        query = {**params, **({"cursor": cursor} if cursor else {})}
        answer = server.http.get(
            server.url("/v1/players/me/matches"), params=query, headers=bearer(token)
        )
        assert answer.status_code == 200, answer.text
        assert answer.headers["Cache-Control"] == "private, no-store"
        page = answer.json()
        assert set(page) == {"items", "next"}
        assert len(page["items"]) <= params.get("limit", 20)
        found += page["items"]
        cursor = page["next"]
        if cursor is None:
            return found
    raise AssertionError("no end to the pages")


def test_waiting_active_and_finished_even_once_redis_forgot_the_finished_one(server, client):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    over = finished_between(server, ada, bob)
    archive_due(server)
    forgotten(client, over)
    active = create(server, ada["token"], [{"player": "me"}, {}])
    join(server, bob["token"], active, 1)
    waiting = create(server, ada["token"], [{"player": "me"}, {}])

    listed = mine(server, ada["token"])
    assert [(m["id"], m["status"]) for m in listed] == [
        (waiting, "waiting"),
        (active, "active"),
        (over, "finished"),
    ]
    assert all(m["seat"] == 0 and m["game"] == "dekal" for m in listed)
    assert listed[0]["ended_at"] is None and listed[1]["ended_at"] is None
    assert listed[2]["ended_at"].endswith("Z") and listed[2]["created_at"].endswith("Z")
    finished = listed[2]
    assert [s.get("player") for s in finished["seats"]] == [ada["id"], bob["id"]]
    assert [s["name"] for s in finished["seats"]] == ["Ada", "Bob"]
    assert listed[1]["seats"][1]["player"] == bob["id"]
    path = f"/v1/games/dekal/matches/{over}"
    assert finished["links"] == {
        "match": path,
        "record": f"{path}/record",
        "replay": f"{path}/replay",
    }
    # the links lead to the match, read from the archive now
    assert server.http.get(server.url(path)).json()["status"] == "finished"
    assert server.http.get(server.url(path + "/record")).status_code == 200
    # Bob sat in two of them, at seat 1; never in Ada's waiting one
    assert [(m["id"], m["seat"]) for m in mine(server, bob["token"])] == [(active, 1), (over, 1)]


def test_archiving_takes_a_match_off_the_live_index(server, client):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    over = finished_between(server, ada, bob)
    members = [m.decode() for m in client.zrange(index_key(ada["id"]), 0, -1)]
    assert [m.split(":")[1] for m in members] == [over]  # finished, not archived: live still
    assert mine(server, ada["token"])[0]["status"] == "finished"
    archive_due(server)
    assert client.zcard(index_key(ada["id"])) == 0 and client.zcard(index_key(bob["id"])) == 0
    assert [m["id"] for m in mine(server, ada["token"])] == [over]  # from the archive now


def test_the_index_is_per_player_bounded_and_expires(server, client, monkeypatch):
    monkeypatch.setattr(player_matches, "LIVE_MAX", 3)
    ada = guest(server, "Ada")
    made = []
    for _ in range(5):
        made.append(create(server, ada["token"], [{"player": "me"}, {}]))
        time.sleep(0.002)
    key = index_key(ada["id"])
    assert key == f"player:{{{ada['id']}}}:matches"  # one slot per player on a cluster
    assert client.zcard(key) == 3  # the oldest created went first
    assert [m["id"] for m in mine(server, ada["token"])] == made[:1:-1]
    ttl = client.ttl(key)
    assert 0 < ttl <= server.app.extensions["ludotheque.player_matches_ttl"]


def test_a_seat_left_leaves_the_list_and_the_index(server, client):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    match_id = create(server, ada["token"], [{"player": "me"}, {}, {}])
    join(server, bob["token"], match_id, 2)
    assert [m["seat"] for m in mine(server, bob["token"])] == [2]
    left = server.http.delete(
        server.url(f"/v1/games/dekal/matches/{match_id}/seats/2"), headers=bearer(bob["token"])
    )
    assert left.status_code == 200, left.text
    assert mine(server, bob["token"]) == []
    assert client.zcard(index_key(bob["id"])) == 0  # taken off, not only skipped
    assert [m["id"] for m in mine(server, ada["token"])] == [match_id]
    events = server.http.get(server.url(f"/v1/games/dekal/matches/{match_id}/events")).json()
    assert {"seat": 2, "player": bob["id"]}.items() <= events["events"][-1].items()


def test_another_device_of_the_player_sees_the_same_list(server):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    over = finished_between(server, ada, bob)
    archive_due(server)
    live = create(server, ada["token"], [{"player": "me"}, {}])
    phone = server.http.post(server.url("/v1/players/me/tokens"), headers=bearer(ada["token"]))
    assert phone.status_code == 201
    on_phone = mine(server, phone.json()["token"])
    assert [m["id"] for m in on_phone] == [live, over]
    assert on_phone == mine(server, ada["token"])


def test_another_players_matches_never_show(server):
    ada, bob, eve = guest(server, "Ada"), guest(server, "Bob"), guest(server, "Eve")
    finished_between(server, ada, bob)
    archive_due(server)
    create(server, ada["token"], [{"player": "me"}, {}])
    # a seat token's match, and matches Eve created for others, are not Eve's
    create(server, eve["token"], [{"name": "Someone"}, {}])
    assert mine(server, eve["token"]) == []
    for match in mine(server, bob["token"]):
        assert match["seats"][match["seat"]]["player"] == bob["id"]


def archived_for(player: dict, n: int, ended_ms: int, key: Any) -> Archived:
    """A made-up finished Pacal match in which ``player`` held seat 1."""
    return archived_with([None, player], n, ended_ms, key, "pacal")


@pytest.mark.parametrize("limit", [1, 2, 3, 7, 100])
def test_pages_have_no_repeats_nor_gaps(server, limit):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    archive: Archive = server.app.extensions["ludotheque.archive"]
    key = server.app.extensions["ludotheque.record_keys"].get()
    base = int(ada["id"][:8], 16) << 40  # ids of this player's own (tests share the database)
    ends = [T0 + 60_000 * (n // 3) for n in range(11)]  # ties of end: ordered by id
    made = [archived_for(ada, base + n, ended, key) for n, ended in enumerate(ends)]
    for archived in made:
        assert archive.put(archived)
    live = []
    for _ in range(6):
        live.append(create(server, ada["token"], [{"player": "me"}, {}]))
        time.sleep(0.002)  # created in distinct ms: newest created first is this order
    join(server, bob["token"], live[2], 1)
    expected = list(reversed(live)) + [
        a.id for a in sorted(made, key=lambda a: (a.ended_ms, a.id), reverse=True)
    ]
    listed = mine(server, ada["token"], limit=limit)
    assert [m["id"] for m in listed] == expected
    assert [m["status"] for m in listed[:6]] == ["waiting"] * 3 + ["active"] + ["waiting"] * 2
    assert {m["status"] for m in listed[6:]} == {"finished"}
    assert all(m["seat"] == 1 for m in listed[6:])


def test_a_walk_does_not_show_twice_a_match_archived_while_it_reads_on(server):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    over = finished_between(server, ada, bob)  # finished, not archived yet: a live one
    older = finished_between(server, ada, bob)
    archive_due(server)
    first = server.http.get(
        server.url("/v1/players/me/matches"), params={"limit": 1}, headers=bearer(ada["token"])
    ).json()
    # both archived before the walk began: the first page is the archive's newest
    assert [m["id"] for m in first["items"]] == [older]
    now_live = finished_between(server, ada, bob)
    walk = server.http.get(
        server.url("/v1/players/me/matches"), params={"limit": 1}, headers=bearer(ada["token"])
    ).json()
    assert [m["id"] for m in walk["items"]] == [now_live]  # live, finished, not archived
    archive_due(server)  # archived while the client reads on
    rest = []
    cursor = walk["next"]
    while cursor:
        page = server.http.get(
            server.url("/v1/players/me/matches"),
            params={"limit": 1, "cursor": cursor},
            headers=bearer(ada["token"]),
        ).json()
        rest += [m["id"] for m in page["items"]]
        cursor = page["next"]
    assert rest == [older, over]  # not now_live again
    assert [m["id"] for m in mine(server, ada["token"])] == [now_live, older, over]


def test_only_a_player_token_lists_and_a_cursor_is_checked(server):
    url = server.url("/v1/players/me/matches")
    assert server.http.get(url).status_code == 401
    seat_token = server.http.post(
        server.url("/v1/games/dekal/matches"), json={"players": [{"name": "A"}, {}]}
    ).json()["seats"][0]["token"]
    assert server.http.get(url, headers=bearer(seat_token)).status_code == 401
    ada = guest(server, "Ada")
    for bad in ["x", "TDoxOjE", "QTox" + "A" * 10, "", "A" * 200]:
        answer = server.http.get(url, params={"cursor": bad}, headers=bearer(ada["token"]))
        assert answer.status_code == 422, (bad, answer.text)
    for limit in [0, 101, "x"]:
        answer = server.http.get(url, params={"limit": limit}, headers=bearer(ada["token"]))
        assert answer.status_code == 422


# -- the archive knows who sat where (GET /v1/matches?player=, export, profiles) ------
def archived_with(
    seats: list[dict | None], n: int, ended_ms: int, key: Any, game: str
) -> Archived:
    """A made-up finished match whose seats are held by these players (None:
    a bot), signed."""
    match_id = f"{n:032x}"
    shown = [
        {"seat": i, "name": None, "bot": "random"}
        if p is None
        else {"seat": i, "name": p["name"], "bot": None, "player": p["id"]}
        for i, p in enumerate(seats)
    ]
    record = sign({"format": "ludotheque-record/1", "id": match_id, "game": game}, key)
    return Archived(
        id=match_id,
        game=game,
        created_ms=ended_ms - 60_000,
        ended_ms=ended_ms,
        archived_ms=ended_ms + 5,
        version=10,
        seeded=False,
        seats=shown,
        outcome={"winners": [0]},
        final={"id": match_id, "status": "finished"},
        record=record,
    )


def searched(server: LiveServer, **params: Any) -> list[dict[str, Any]]:
    found, cursor = [], None
    for _ in range(100):
        query = {**params, **({"cursor": cursor} if cursor else {})}
        answer = server.http.get(server.url("/v1/matches"), params=query)
        assert answer.status_code == 200, answer.text
        found += answer.json()["matches"]
        cursor = answer.json()["next"]
        if cursor is None:
            return found
    raise AssertionError("no end to the pages")


@pytest.fixture
def two_players_archived(server: LiveServer) -> tuple[dict, dict, list[Archived]]:
    """Ada's and Bob's finished matches, some together, some of other games."""
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    archive: Archive = server.app.extensions["ludotheque.archive"]
    key = server.app.extensions["ludotheque.record_keys"].get()
    base = int(ada["id"][:8], 16) << 40
    plans = [[ada, None], [None, ada], [ada, bob], [bob, None], [bob, ada], [None, bob], [ada]]
    made = [
        archived_with(seats, base + n, T0 + 60_000 * (n // 2), key, ["dekal", "pacal"][n % 2])
        for n, seats in enumerate(plans)
    ]
    for archived in made:
        assert archive.put(archived)
    return ada, bob, made


def ids_newest_first(found: list[Archived]) -> list[str]:
    return [a.id for a in sorted(found, key=lambda a: (a.ended_ms, a.id), reverse=True)]


def held(archived: Archived, player: dict) -> bool:
    return any(seat.get("player") == player["id"] for seat in archived.seats)


@pytest.mark.parametrize("limit", [1, 2, 20])
def test_the_archive_finds_a_players_finished_matches(server, two_players_archived, limit):
    ada, bob, made = two_players_archived
    for player in (ada, bob):
        found = searched(server, player=player["id"], limit=limit)
        assert [m["id"] for m in found] == ids_newest_first([a for a in made if held(a, player)])
        for match in found:
            assert player["id"] in [seat.get("player") for seat in match["seats"]]
    dekal = searched(server, player=ada["id"], game="dekal", limit=limit)
    expected = [a for a in made if held(a, ada) and a.game == "dekal"]
    assert [m["id"] for m in dekal] == ids_newest_first(expected) and expected
    together = searched(server, player=ada["id"], bot="random", limit=limit)
    assert [m["id"] for m in together] == ids_newest_first(
        [a for a in made if held(a, ada) and a.bots() == ["random"]]
    )


def test_a_malformed_player_id_is_a_422_and_an_unknown_one_finds_nothing(server):
    for bad in ["me", "X" * 32, "0" * 31, "0" * 33]:
        answer = server.http.get(server.url("/v1/matches"), params={"player": bad})
        assert answer.status_code == 422, answer.text
        assert answer.json()["code"] == "invalid_request"
    assert searched(server, player="f" * 32) == []


def test_a_players_records_are_exported_over_http_and_by_the_cli(
    server, module_db_url, two_players_archived
):
    ada, _bob, made = two_players_archived
    expected = ids_newest_first([a for a in made if held(a, ada)])
    answer = server.http.get(server.url("/v1/matches/export"), params={"player": ada["id"]})
    assert answer.status_code == 200, answer.text
    assert [orjson.loads(line)["id"] for line in answer.text.splitlines()] == expected
    ran = CliRunner().invoke(
        main, ["export", "--database-url", module_db_url, "--player", ada["id"], "--no-progress"]
    )
    assert ran.exit_code == 0, ran.output
    assert [orjson.loads(line)["id"] for line in ran.stdout.splitlines()] == expected
    refused = CliRunner().invoke(
        main, ["export", "--database-url", module_db_url, "--player", "nobody"]
    )
    assert refused.exit_code == 2 and "--player" in refused.output


def test_a_profile_counts_archived_matches_once(server, client):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    profile = server.url(f"/v1/players/{ada['id']}")
    assert server.http.get(profile).json()["matches_played"] == {}
    for _ in range(2):
        finished_between(server, ada, bob)
    not_yet = server.http.get(profile).json()["matches_played"]
    assert not_yet == {}  # finished, not archived: not counted yet
    archive_due(server)
    assert server.http.get(profile).json()["matches_played"] == {"dekal": 2}
    of_bob = server.http.get(server.url(f"/v1/players/{bob['id']}")).json()
    assert of_bob["matches_played"] == {"dekal": 2}
    # archived again (a worker that died before Redis heard of it): counted once
    archive: Archive = server.app.extensions["ludotheque.archive"]
    key = server.app.extensions["ludotheque.record_keys"].get()
    again = archived_with([ada, bob], int(ada["id"][:8], 16) << 41, T0, key, "pacal")
    assert archive.put(again) and not archive.put(again)
    assert server.http.get(profile).json()["matches_played"] == {"dekal": 2, "pacal": 1}


def test_a_rematch_is_each_players_reserved_then_taken(server, client):
    ada, bob = guest(server, "Ada"), guest(server, "Bob")
    over = finished_between(server, ada, bob)
    url = server.url(f"/v1/games/dekal/matches/{over}/rematch")
    asked = server.http.post(url, headers=bearer(ada["token"]))
    assert asked.status_code in (200, 201), asked.text
    rematch = asked.json()["id"]
    assert asked.json()["player"] == ada["id"] and "token" not in asked.json()
    seats = server.http.get(server.url(f"/v1/games/dekal/matches/{rematch}")).json()["seats"]
    seat_of = {seat["player"]: seat["seat"] for seat in seats}  # the rematch may seat them anew
    # Bob's seat is reserved for him: the rematch is in his list, waiting for him
    (first, *_rest) = mine(server, bob["token"])
    assert (first["id"], first["status"], first["seat"]) == (
        rematch,
        "waiting",
        seat_of[bob["id"]],
    )
    assert first["seats"][first["seat"]]["reserved"] is True
    taken = server.http.post(url, headers=bearer(bob["token"]))
    assert taken.status_code in (200, 201), taken.text
    for player, seat in ((ada, 0), (bob, 1)):
        listed = mine(server, player["token"])
        assert [(m["id"], m["status"], m["seat"]) for m in listed[:2]] == [
            (rematch, "active", seat_of[player["id"]]),
            (over, "finished", seat),
        ]
