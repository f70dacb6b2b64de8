"""Leaving for good over HTTP (issue 36, point 7): a player that deletes
itself, or that its app deletes, is "deleted player" everywhere its name
was kept: the seats of its live matches (followers told), the archive
(seats, final answers) and the signed records, signed again, which still
verify; its tokens end and its index of live matches is gone. On SQLite
and PostgreSQL, with a real archiver (in this process)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import sqlalchemy as sa
from click.testing import CliRunner

from service.cli import main
from service.domain.signing import check, parse_public_key
from service.store.archive import matches as archived_matches
from service.store.matches import match_key
from service.store.player_matches import index_key
from service.store.players import players as player_rows
from tests.http.test_my_matches import (
    archive_due,
    bearer,
    create,
    forgotten,
    guest,
    join,
    mine,
    resign,
)
from tests.support.servers import LiveServer

DELETED = "deleted player"


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url, "FINISHED_TTL": 1}
    with LiveServer(config) as live:
        yield live


@pytest.fixture(scope="module")
def client(server: LiveServer) -> redis.Redis:
    return server.matches.store.client


def played_then_resigned(server: LiveServer, first: dict, second: dict) -> str:
    """A Dékal match of ``first`` (seat 0) and ``second`` (seat 1) in which
    one action is played, then ``first`` resigns."""
    match_id = create(server, first["token"], [{"player": "me"}, {}])
    join(server, second["token"], match_id, 1)
    url = server.url(f"/v1/games/dekal/matches/{match_id}")
    to_act = server.http.get(url).json()["to_act"][0]
    mover = (first, second)[to_act]
    legal = server.http.get(url + "/legal-actions", headers=bearer(mover["token"])).json()
    acted = server.http.post(
        url + "/actions", json=legal["actions"][0], headers=bearer(mover["token"])
    )
    assert acted.status_code == 200, acted.text
    resign(server, first["token"], match_id)
    return match_id


def verified(server: LiveServer, record_text: str, tmp_path) -> str:
    """What `ludotheque verify` says of the record, with the server's key."""
    key = tmp_path / "record-key.json"
    key.write_text(server.http.get(server.url("/v1/record-key")).text)
    path = tmp_path / "record.json"
    path.write_text(record_text)
    ran = CliRunner().invoke(main, ["verify", "--key", str(key), str(path)])
    assert ran.exit_code == 0, ran.output
    return ran.output


def archived_row(server: LiveServer, match_id: str) -> Any:
    engine = server.app.extensions["ludotheque.archive"].engine
    with engine.connect() as connection:
        return connection.execute(
            sa.select(archived_matches).where(archived_matches.c.id == match_id)
        ).first()


def test_a_deleted_player_is_deleted_player_in_view_archive_and_record(server, client, tmp_path):
    ada, bob = guest(server, "Adalberta"), guest(server, "Bob")
    over = played_then_resigned(server, ada, bob)
    archive_due(server)
    forgotten(client, over)
    active = create(server, ada["token"], [{"player": "me"}, {}])
    join(server, bob["token"], active, 1)
    waiting = create(server, ada["token"], [{"player": "me"}, {}])
    record_url = server.url(f"/v1/games/dekal/matches/{over}/record")
    before = server.http.get(record_url)  # kept by the process from now on
    assert before.json()["seats"][0]["name"] == "Adalberta"
    replay_url = server.url(f"/v1/games/dekal/matches/{over}/replay")
    assert server.http.get(replay_url).json()["seats"][0]["name"] == "Adalberta"
    log = server.url(f"/v1/games/dekal/matches/{active}/events")
    seen = server.http.get(log).json()["next"]

    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ada["token"]))
    assert gone.status_code == 204, gone.text

    # a waiting match: its seat given back (nobody could play it any more)
    view = server.http.get(server.url(f"/v1/games/dekal/matches/{waiting}")).json()
    assert view["seats"][0]["open"] is True and "player" not in view["seats"][0]
    # a started one: resigned (here the match ends), renamed, and followers told
    view = server.http.get(server.url(f"/v1/games/dekal/matches/{active}")).json()
    assert view["seats"][0]["name"] == DELETED and view["seats"][0]["player"] == ada["id"]
    assert view["seats"][1]["name"] == "Bob" and view["status"] == "finished"
    assert view["outcome"]["ended_by"] == "resignation"
    told = server.http.get(log, params={"after": seen}).json()["events"]
    assert [e["type"] for e in told] == ["resigned", "match_over", "seat_renamed"]
    assert (told[-1]["seat"], told[-1]["name"]) == (0, DELETED)
    # the archive: listed seats, the final answer, and the stored row throughout
    (found,) = server.http.get(server.url("/v1/matches"), params={"player": ada["id"]}).json()[
        "matches"
    ]
    assert [s["name"] for s in found["seats"]] == [DELETED, "Bob"]
    final = server.http.get(server.url(f"/v1/games/dekal/matches/{over}")).json()
    assert [s["name"] for s in final["seats"]] == [DELETED, "Bob"]
    row = archived_row(server, over)
    assert "Adalberta" not in row.seats + row.final + row.record
    # the record: renamed, signed again with the key of now, and it still verifies
    after = server.http.get(record_url)
    assert "Adalberta" not in after.text
    record = after.json()
    assert [s["name"] for s in record["seats"]] == [DELETED, "Bob"]
    assert record["actions"] == before.json()["actions"]
    public = parse_public_key(server.http.get(server.url("/v1/record-key")).text)
    assert check(record, public) is None
    assert verified(server, after.text, tmp_path).startswith(f"ok: dekal match {over}")
    assert server.http.get(replay_url).json()["seats"][0]["name"] == DELETED
    # Bob's list says so too; nothing is left of Ada but her id
    assert {m["seats"][0]["name"] for m in mine(server, bob["token"])} == {DELETED}
    assert client.exists(index_key(ada["id"])) == 0
    refused = server.http.get(server.url("/v1/players/me"), headers=bearer(ada["token"]))
    assert refused.status_code == 401
    assert server.http.get(server.url(f"/v1/players/{ada['id']}")).status_code == 404
    engine = server.app.extensions["ludotheque.archive"].engine
    with engine.connect() as connection:
        kept = connection.execute(
            sa.select(player_rows).where(player_rows.c.id == ada["id"])
        ).one()
    assert kept.name == DELETED and kept.app_id is None and kept.external_id is None


def test_an_app_deletes_its_player_and_the_record_still_verifies(server, tmp_path):
    operator = server.app.extensions["ludotheque.players"]
    _app_id, key = operator.create_app("leaving")
    made = server.http.post(
        server.url("/v1/apps/me/players"),
        json={"external_id": "u-1", "name": "Cunegonde"},
        headers=bearer(key),
    )
    assert made.status_code == 200, made.text
    player = made.json()
    bob = guest(server, "Bob")
    over = played_then_resigned(server, player, bob)
    archive_due(server)
    gone = server.http.delete(
        server.url(f"/v1/apps/me/players/{player['id']}"), headers=bearer(key)
    )
    assert gone.status_code == 204, gone.text
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{over}/record"))
    assert "Cunegonde" not in record.text
    assert record.json()["seats"][0]["name"] == DELETED
    assert verified(server, record.text, tmp_path).startswith(f"ok: dekal match {over}")
    again = server.http.delete(
        server.url(f"/v1/apps/me/players/{player['id']}"), headers=bearer(key)
    )
    assert again.status_code == 404  # gone: not told apart from never there


def test_a_match_finished_but_not_archived_is_archived_renamed(server, client, tmp_path):
    """Redis lost the player's index (or the match was beyond its bound):
    the deletion cannot find the match in Redis, and the archive renames it
    when it arrives."""
    ada, bob = guest(server, "Zenobia"), guest(server, "Bob")
    over = played_then_resigned(server, ada, bob)  # finished, not archived yet
    client.delete(index_key(ada["id"]))
    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ada["token"]))
    assert gone.status_code == 204
    archive_due(server)
    row = archived_row(server, over)
    assert "Zenobia" not in row.seats + row.final + row.record
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{over}/record"))
    assert record.json()["seats"][0]["name"] == DELETED
    assert verified(server, record.text, tmp_path).startswith(f"ok: dekal match {over}")


def test_a_finished_match_still_in_redis_is_renamed_there_and_archived_so(
    server, client, tmp_path
):
    ada, bob = guest(server, "Philomena"), guest(server, "Bob")
    over = played_then_resigned(server, ada, bob)  # finished, in ada's index
    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ada["token"]))
    assert gone.status_code == 204
    view = server.http.get(server.url(f"/v1/games/dekal/matches/{over}")).json()
    assert view["status"] == "finished" and view["seats"][0]["name"] == DELETED
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{over}/record"))
    assert "Philomena" not in record.text  # built from Redis now
    archive_due(server)
    forgotten(client, over)
    row = archived_row(server, over)
    assert "Philomena" not in row.seats + row.final + row.record
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{over}/record"))
    assert verified(server, record.text, tmp_path).startswith(f"ok: dekal match {over}")


def test_another_server_process_drops_its_copy_of_the_record(
    server, client, redis_url, module_db_url, tmp_path
):
    """Two server processes over one Redis and one database: the one that
    did not delete the player had the record in memory, and serves the
    renamed one within seconds."""
    ada, bob = guest(server, "Leocadia"), guest(server, "Bob")
    over = played_then_resigned(server, ada, bob)
    archive_due(server)
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url, "FINISHED_TTL": 1}
    with LiveServer(config) as other:
        path = f"/v1/games/dekal/matches/{over}"
        assert "Leocadia" in other.http.get(other.url(path + "/record")).text  # kept there now
        assert "Leocadia" in other.http.get(other.url(path + "/replay")).text
        gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ada["token"]))
        assert gone.status_code == 204
        deadline = time.monotonic() + 10
        while "Leocadia" in (record := other.http.get(other.url(path + "/record")).text):
            assert time.monotonic() < deadline, "the other process kept the old record"
            time.sleep(0.2)
        assert verified(other, record, tmp_path).startswith(f"ok: dekal match {over}")
        assert "Leocadia" not in other.http.get(other.url(path + "/replay")).text


def test_a_rematch_seat_reserved_for_the_player_is_renamed(server):
    ada, bob = guest(server, "Ada"), guest(server, "Hildegard")
    over = played_then_resigned(server, ada, bob)
    asked = server.http.post(
        server.url(f"/v1/games/dekal/matches/{over}/rematch"), headers=bearer(ada["token"])
    )
    assert asked.status_code in (200, 201), asked.text
    rematch = asked.json()["id"]
    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(bob["token"]))
    assert gone.status_code == 204
    for match_id in (over, rematch):
        view = server.http.get(server.url(f"/v1/games/dekal/matches/{match_id}")).json()
        assert "Hildegard" not in str(view["seats"])
        assert DELETED in [seat["name"] for seat in view["seats"]]


def test_an_archived_match_redis_still_has_is_renamed_there_too(server, client, tmp_path):
    """Once archived, a match stays readable in Redis FINISHED_TTL longer
    (its view is read there): its seats are renamed there as well."""
    ada, bob = guest(server, "Ottoline"), guest(server, "Bob")
    over = played_then_resigned(server, ada, bob)
    archive_due(server, finished_ttl=600)  # archived, off the index, still in Redis
    assert client.zcard(index_key(ada["id"])) == 0 and client.ttl(match_key(over)) > 1
    gone = server.http.delete(server.url("/v1/players/me"), headers=bearer(ada["token"]))
    assert gone.status_code == 204
    view = server.http.get(server.url(f"/v1/games/dekal/matches/{over}"))
    assert "Ottoline" not in view.text and view.json()["seats"][0]["name"] == DELETED
    archive_due(server, finished_ttl=600)  # the renaming commit queued it again
    row = archived_row(server, over)
    assert "Ottoline" not in row.seats + row.final + row.record
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{over}/record"))
    assert "Ottoline" not in record.text
    assert verified(server, record.text, tmp_path).startswith(f"ok: dekal match {over}")
