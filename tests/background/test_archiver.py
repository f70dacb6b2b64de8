"""The archiver (issue 35, points 1 and 2): every finished match archived
once, within seconds of its end, by the worker processes; nothing lost when
a worker is killed; Redis forgets a match only once the archive has it; and
after that, the match and its record are read from the archive.

Against a Redis of each test's own (the archive's queue is one per Redis)
and a real database, SQLite and PostgreSQL (``migrated_database_url``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
import requests
import sqlalchemy as sa

from service.background import archiver as archiving_module
from service.background.archiver import Archiver
from service.domain import fairness
from service.domain.signing import parse_public_key
from service.store.archive import Archive, matches
from service.store.archiving import DUE, GRACE_S
from service.store.database import engine_for, migrate
from service.store.matches import log_key, match_key
from tests.support import databases
from tests.support.client import ApiClient
from tests.support.servers import LUDOTHEQUE, LiveServer, bot_workers

GAMES = ["dekal", "pacal", "gaudi", "ducale"]
FINISHED_TTL = 600


@pytest.fixture
def own_redis(module_redis: str, private_redis: redis.Redis) -> str:
    """The module's Redis, emptied: the archive's queue is one per Redis."""
    return module_redis


@pytest.fixture
def server(own_redis: str, migrated_database_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": own_redis, "DATABASE_URL": migrated_database_url}
    with LiveServer({**config, "FINISHED_TTL": FINISHED_TTL}) as live:
        yield live


def worker_process(redis_url: str, database_url: str, log: Path, **env: str) -> subprocess.Popen:
    """A real `ludotheque worker`: bot turns, webhooks, and the archiver."""
    environment = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_DATABASE_URL": database_url,
        "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS": "0",
        "LUDOTHEQUE_RATE_LIMITS": "0",
        "LUDOTHEQUE_FINISHED_TTL": str(FINISHED_TTL),
        **env,
    }
    environment.pop("PROMETHEUS_MULTIPROC_DIR", None)
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker", "--budget-ms", "5"],
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=out,
            start_new_session=True,
        )


def stop(process: subprocess.Popen, signum: int = signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(signum)
    process.wait(timeout=30)


def bot_match(api: ApiClient, game: str) -> str:
    created = api.create(game, {"players": [{"bot": "random"}, {"bot": "random"}]})
    assert created.status_code == 201, created.text
    return created.json()["id"]


@pytest.fixture
def engine(migrated_database_url: str) -> Iterator[sa.Engine]:
    engine = engine_for(migrated_database_url)
    yield engine
    engine.dispose()


def finished(api: ApiClient, game: str, *ids: str, timeout: float = 60) -> None:
    """Wait until every match of ``ids`` is over (its bots play it out)."""
    deadline = time.monotonic() + timeout
    for match_id in ids:
        while api.get(game, match_id).json()["status"] != "finished":
            assert time.monotonic() < deadline, f"{match_id} not over in {timeout} s"
            time.sleep(0.05)


def archived_rows(engine: sa.Engine, ids: list[str]) -> dict[str, Any]:
    query = sa.select(matches).where(matches.c.id.in_(ids))
    with engine.connect() as connection:
        return {row.id: row for row in connection.execute(query)}


def wait_archived(engine: sa.Engine, ids: list[str], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = archived_rows(engine, ids)
        if len(rows) == len(ids):
            return rows
        time.sleep(0.1)
    missing = sorted(set(ids) - set(archived_rows(engine, ids)))
    raise AssertionError(f"not archived within {timeout} s: {missing}")


def public_key(server: LiveServer) -> bytes:
    return parse_public_key(server.http.get(server.url("/v1/record-key")).text)


def test_every_finished_match_is_archived_once_soon_after_its_end_then_read_from_there(
    server, own_redis, migrated_database_url, engine, tmp_path
):
    api = ApiClient(server.base, server.http)
    client = redis.Redis.from_url(own_redis)
    worker = worker_process(own_redis, migrated_database_url, tmp_path / "worker.log")
    try:
        ids = {bot_match(api, game): game for game in GAMES for _ in range(2)}
        rows = wait_archived(engine, list(ids))
    finally:
        stop(worker)
    key = public_key(server)
    for match_id, game in ids.items():
        row = rows[match_id]
        assert row.game == game
        # archived within 5 s of its end (here: well within)
        assert 0 <= row.archived_ms - row.ended_ms < 5000, row.archived_ms - row.ended_ms
        # only now does Redis let it expire
        assert 0 < client.ttl(match_key(match_id)) <= FINISHED_TTL
        assert 0 < client.ttl(log_key(match_id)) <= FINISHED_TTL
        # the archived record is the one the server serves, and it verifies
        record = orjson.loads(row.record)
        served = api.http.get(server.url(f"/v1/games/{game}/matches/{match_id}/record")).json()
        assert served == record
        assert fairness.verify(record, key) == []
        final = orjson.loads(row.final)
        live_view = api.get(game, match_id).json()
        assert final == live_view
    assert client.zcard(DUE) == 0, "the archive's queue is empty once all are archived"

    # Redis forgets them: they are read from the archive, as a spectator saw them
    for match_id in ids:
        client.delete(match_key(match_id), log_key(match_id))
    for match_id, game in ids.items():
        final = orjson.loads(rows[match_id].final)
        got = api.get(game, match_id, "a-token-of-nobody")
        assert got.status_code == 200, got.text
        answer = got.json()
        assert answer == final
        assert answer["status"] == "finished" and answer["your_seat"] is None
        assert answer["outcome"]["seed"] is not None
        assert "token" not in orjson.dumps(answer["seats"]).decode()
        again = api.http.get(
            server.url(f"/v1/games/{game}/matches/{match_id}"),
            headers={"If-None-Match": got.headers["ETag"]},
        )
        assert again.status_code == 304
        record = api.http.get(server.url(f"/v1/games/{game}/matches/{match_id}/record"))
        assert record.status_code == 200
        assert fairness.verify(record.json(), key) == []
        # `ludotheque verify` checks an archived record as before
        path = tmp_path / f"{match_id}.json"
        path.write_bytes(record.content)
        checked = subprocess.run(
            [LUDOTHEQUE, "verify", "--key", key.hex(), str(path)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    # another game's path, or an id never seen, is still 404
    match_id, game = next(iter(ids.items()))
    other = next(g for g in GAMES if g != game)
    assert api.get(other, match_id).status_code == 404
    assert api.get(game, "0" * 32).status_code == 404
    assert (
        api.http.get(server.url(f"/v1/games/{game}/matches/{'0' * 32}/record")).status_code == 404
    )


def test_a_worker_killed_mid_way_loses_none_and_archives_none_twice(
    server, own_redis, migrated_database_url, engine, tmp_path
):
    api = ApiClient(server.base, server.http)
    log = tmp_path / "workers.log"
    # its leases run out in 3 s, not 30: the second worker takes over sooner
    lease = {"LUDOTHEQUE_ARCHIVE_LEASE_S": "3"}
    first = worker_process(own_redis, migrated_database_url, log, **lease)
    ids = [bot_match(api, "dekal") for _ in range(24)]
    # killed while it plays and archives (some archived already, some not)
    deadline = time.monotonic() + 60
    while not archived_rows(engine, ids) and time.monotonic() < deadline:
        time.sleep(0.02)
    stop(first, signal.SIGKILL)
    done_before = len(archived_rows(engine, ids))
    assert done_before < len(ids), "the worker had archived everything before it was killed"
    second = worker_process(own_redis, migrated_database_url, log, **lease)
    try:
        wait_archived(engine, ids, timeout=120)
    finally:
        stop(second)
    with engine.connect() as connection:
        count = connection.execute(
            sa.select(sa.func.count()).select_from(matches).where(matches.c.id.in_(ids))
        ).scalar()
    assert count == len(ids)


def test_a_match_archived_by_a_worker_that_died_before_unqueueing_it_is_archived_once(
    server, own_redis, engine, monkeypatch
):
    """Killed between the database's commit and the queue's ``done``: the
    lease runs out, the next archiver finds it archived, and lets it go."""
    api = ApiClient(server.base, server.http)
    app = server.app
    archive = Archive(engine)
    queue = app.extensions["ludotheque.archive_queue"]
    client = redis.Redis.from_url(own_redis)
    with bot_workers(app):
        match_id = bot_match(api, "pacal")
        finished(api, "pacal", match_id)

    class Killed(BaseException):
        pass

    def then_die(*_: Any) -> bool:
        raise Killed

    monkeypatch.setattr(archiving_module, "LEASE_S", 0.5)
    keys = app.extensions["ludotheque.record_keys"]
    dying = Archiver(app.extensions["ludotheque.matches"], queue, archive, keys, FINISHED_TTL)
    monkeypatch.setattr(queue, "done", then_die)
    with pytest.raises(Killed):
        dying.run_once()
    assert archive.has(match_id)
    assert client.ttl(match_key(match_id)) > 0  # Redis heard of it before the death
    assert client.zscore(DUE, match_id) is not None  # still queued, under a lease
    monkeypatch.undo()
    monkeypatch.setattr(archiving_module, "LEASE_S", 0.5)
    time.sleep(0.6)
    later = Archiver(app.extensions["ludotheque.matches"], queue, archive, keys, FINISHED_TTL)
    assert later.run_once() is None
    assert client.zscore(DUE, match_id) is None
    assert len(archived_rows(engine, [match_id])) == 1


def test_an_end_whose_process_died_before_telling_the_queue_is_archived_all_the_same(
    server, engine
):
    """The write that ended the match landed, and its process died before
    its subscribers ran: the entry queued before the write comes due by
    itself, ``GRACE_S`` later."""
    app = server.app
    matches_ = app.extensions["ludotheque.matches"]
    commits = matches_.commits
    commits.subscribers = tuple(s for s in commits.subscribers if s.__name__ != "ready")
    archive = Archive(engine)
    queue = app.extensions["ludotheque.archive_queue"]
    api = ApiClient(server.base, server.http)
    with bot_workers(app):
        match_id = bot_match(api, "dekal")
        finished(api, "dekal", match_id)
    ended = time.time()
    keys = app.extensions["ludotheque.record_keys"]
    archiver = Archiver(matches_, queue, archive, keys, FINISHED_TTL)
    deadline = time.monotonic() + GRACE_S + 10
    while not archive.has(match_id):
        assert time.monotonic() < deadline, "never archived"
        due = archiver.run_once()
        if due is not None:
            time.sleep(max(0.0, min(0.1, due - time.time())))
    assert time.time() - ended <= GRACE_S + 1


def test_a_queued_match_that_did_not_finish_is_looked_at_again_later(server, engine):
    """The write that was to end it lost a race or was refused: it stays
    queued, looked at again later, and is not archived."""
    app = server.app
    api = ApiClient(server.base, server.http)
    created = api.create("dekal", {"players": [{"name": "Ada"}, {"name": "Bob"}]}).json()
    queue = app.extensions["ludotheque.archive_queue"]
    queue.expect(created["id"], time.time() - GRACE_S)
    archive = Archive(engine)
    keys = app.extensions["ludotheque.record_keys"]
    archiver = Archiver(app.extensions["ludotheque.matches"], queue, archive, keys, FINISHED_TTL)
    assert archiver.run_once() is None
    assert not archive.has(created["id"])
    due = queue.client.zscore(DUE, created["id"])
    assert due is not None and due > time.time() + 20


def test_without_a_database_a_finished_match_expires_as_before(live_server):
    """No LUDOTHEQUE_DATABASE_URL: nothing is archived; a finished match is
    readable for LUDOTHEQUE_FINISHED_TTL (the archive's reads answer 404)."""
    server = live_server(FINISHED_TTL=1)
    assert server.app.extensions["ludotheque.archive"] is None
    api = ApiClient(server.base, server.http)
    with bot_workers(server.app):
        match_id = bot_match(api, "dekal")
        finished(api, "dekal", match_id)
    time.sleep(1.5)
    assert api.get("dekal", match_id).status_code == 404
    assert (
        requests.get(
            server.url(f"/v1/games/dekal/matches/{match_id}/record"), timeout=10
        ).status_code
        == 404
    )


def test_while_the_database_is_down_matches_wait_in_redis_and_are_archived_when_it_is_back(
    own_redis, tmp_path
):
    """A PostgreSQL server of the test's own, stopped while matches end and
    started again: none is lost, none leaves Redis before it is archived."""
    binaries = databases.bin_dir()
    if binaries is None:
        databases.unavailable("no PostgreSQL server binaries (initdb, postgres)")
    server_ = databases.PrivatePostgres(binaries)
    with server_ as admin_url, databases.fresh_database(admin_url) as url:
        migrate(url)
        engine = engine_for(url)
        client = redis.Redis.from_url(own_redis)
        config = {"REDIS_URL": own_redis, "DATABASE_URL": url, "FINISHED_TTL": FINISHED_TTL}
        worker = worker_process(own_redis, url, tmp_path / "worker.log")
        try:
            with LiveServer(config) as server:
                api = ApiClient(server.base, server.http)
                server_.halt()
                ids = [bot_match(api, "dekal") for _ in range(4)]
                finished(api, "dekal", *ids)
                time.sleep(1)  # the archiver tries, and fails
                for match_id in ids:
                    assert client.ttl(match_key(match_id)) == -1, "kept until archived"
                    assert client.zscore(DUE, match_id) is not None
                # a match Redis does not have is looked for in the archive: 503, not 500
                unknown = api.get("dekal", "f" * 32)
                assert unknown.status_code == 503, unknown.text
                assert unknown.json()["code"] == "archive_unavailable"
                assert unknown.headers["Retry-After"] == "5"
                server_.run()
                wait_archived(engine, ids, timeout=30)
                for match_id in ids:
                    assert 0 < client.ttl(match_key(match_id)) <= FINISHED_TTL
        finally:
            stop(worker)
            engine.dispose()


def test_every_way_a_match_ends_is_archived(server, engine):
    """An abort before any action, a resignation, an outcome: each is an end."""
    app = server.app
    api = ApiClient(server.base, server.http)
    people = {"players": [{"name": "Ada"}, {"name": "Bob"}]}
    aborted = api.create("pacal", people).json()
    assert api.abort("pacal", aborted["id"], aborted["seats"][0]["token"]).status_code == 200
    resigned = api.create("dekal", {"players": [{"name": "Ada"}, {"name": "Bob"}]}).json()
    token = resigned["seats"][1]["token"]
    assert api.resign("dekal", resigned["id"], token).status_code == 200
    archive = Archive(engine)
    keys = app.extensions["ludotheque.record_keys"]
    archiver = Archiver(
        app.extensions["ludotheque.matches"],
        app.extensions["ludotheque.archive_queue"],
        archive,
        keys,
        FINISHED_TTL,
    )
    while archiver.run_once() is None:
        pass
    rows = archived_rows(engine, [aborted["id"], resigned["id"]])
    assert set(rows) == {aborted["id"], resigned["id"]}
    for match_id, game in ((aborted["id"], "pacal"), (resigned["id"], "dekal")):
        final = orjson.loads(rows[match_id].final)
        assert final["status"] == "finished" and final == api.get(game, match_id).json()


def test_the_archive_works_on_redis_cluster(cluster_url, engine, migrated_database_url):
    """The queue's keys share one slot; a match's hash and log share its own."""
    config = {"REDIS_URL": cluster_url, "REDIS_CLUSTER": True}
    with LiveServer({**config, "DATABASE_URL": migrated_database_url}) as server:
        app = server.app
        api = ApiClient(server.base, server.http)
        with bot_workers(app):
            ids = [bot_match(api, game) for game in ("dekal", "gaudi")]
            finished(api, "dekal", ids[0])
            finished(api, "gaudi", ids[1])
        archiver = Archiver(
            app.extensions["ludotheque.matches"],
            app.extensions["ludotheque.archive_queue"],
            Archive(engine),
            app.extensions["ludotheque.record_keys"],
            FINISHED_TTL,
        )
        deadline = time.monotonic() + 30
        while len(archived_rows(engine, ids)) < 2:
            assert time.monotonic() < deadline
            if archiver.run_once() is not None:
                time.sleep(0.05)
        client = app.extensions["ludotheque.matches"].store.client
        for match_id in ids:
            assert 0 < client.ttl(match_key(match_id)) <= FINISHED_TTL
            assert 0 < client.ttl(log_key(match_id)) <= FINISHED_TTL
