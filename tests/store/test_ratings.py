"""Ratings kept in Redis and SQL (service/store/ratings.py), on SQLite and
PostgreSQL: a rated match is rated once however often its ratings are
applied (a worker killed between the commit and the apply, the archiver
run twice, an older change arriving late), and Redis's copy (ratings and
leaderboards) is rebuilt from SQL once Redis has lost it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from service.domain.ratings import Rating
from service.store import ratings as kept
from tests.support.ranked import (
    archive_due,
    fresh_ratings,
    match_over,
    new_player,
    rated_match,
    resign,
)
from tests.support.servers import LiveServer


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}
    with LiveServer(config | {"LEADERBOARD_MIN_MATCHES": 1}) as live:
        fresh_ratings(live.app.extensions["ludotheque.matches"].store.client)
        yield live


def store_of(server: LiveServer) -> kept.Ratings:
    return server.app.extensions["ludotheque.ratings"]


def rows(server: LiveServer, table: sa.Table, player_id: str) -> list[Any]:
    engine = server.app.extensions["ludotheque.archive"].engine
    with engine.connect() as connection:
        return connection.execute(sa.select(table).where(table.c.player_id == player_id)).all()


class SubscriberSkipped:
    """A worker killed between a commit and its subscribers: the commit landed,
    the ratings' subscriber never ran."""

    def __init__(self, server: LiveServer) -> None:
        self.commits = server.matches.commits

    def __enter__(self) -> None:
        self.kept = self.commits.subscribers
        self.commits.subscribers = tuple(
            s for s in self.kept if not s.__qualname__.startswith("applying.")
        )

    def __exit__(self, *exc: object) -> None:
        self.commits.subscribers = self.kept


def test_a_killed_worker_and_a_twice_run_archiver_rate_a_match_once(server):
    store = store_of(server)
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    match_id = rated_match(server, "dekal", [ada, bob])
    with SubscriberSkipped(server):
        assert resign(server, "dekal", match_id, bob["token"]).status_code == 200
    assert store.current("dekal", [ada["id"], bob["id"]]) == {}  # never applied
    event = match_over(server, "dekal", match_id)["ratings"]
    archive_due(server)  # the archiver applies it: to SQL, and to Redis again
    now = store.current("dekal", [ada["id"], bob["id"]])
    assert now[ada["id"]].matches == now[bob["id"]].matches == 1
    assert now[ada["id"]].mu == event[0]["after"]["mu"] > 25.0 > now[bob["id"]].mu
    # archived again (a later write to the finished match), applied again
    archive = server.app.extensions["ludotheque.archive"]
    archiver_view = server.app.extensions["ludotheque.matches"].store.load(match_id)
    assert archiver_view is not None
    changes = archiver_view.match["ratings"]
    assert store.apply("dekal", changes) == 0
    engine = archive.engine
    with engine.begin() as connection:
        kept.write(connection, match_id, "dekal", 1, changes)
    assert len(rows(server, kept.rating_changes, ada["id"])) == 1
    (row,) = rows(server, kept.ratings, ada["id"])
    assert row.matches == 1 and row.mu == pytest.approx(now[ada["id"]].mu)
    assert store.current("dekal", [ada["id"]]) == {ada["id"]: now[ada["id"]]}


def test_an_older_change_arriving_late_changes_nothing(server):
    store = store_of(server)
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    first = rated_match(server, "dekal", [ada, bob])
    resign(server, "dekal", first, bob["token"])
    second = rated_match(server, "dekal", [ada, bob])
    resign(server, "dekal", second, ada["token"])
    archive_due(server)
    latest = store.current("dekal", [ada["id"]])[ada["id"]]
    assert latest.matches == 2
    old = server.matches.store.load(first).match["ratings"]
    assert store.apply("dekal", old) == 0
    with server.app.extensions["ludotheque.archive"].engine.begin() as connection:
        kept.write(connection, first, "dekal", 1, old)
    assert store.current("dekal", [ada["id"]])[ada["id"]] == latest
    (row,) = rows(server, kept.ratings, ada["id"])
    assert row.matches == 2 and row.mu == pytest.approx(latest.mu)
    assert len(rows(server, kept.rating_changes, ada["id"])) == 2


def test_redis_lost_ratings_and_boards_are_rebuilt_from_sql_once(server, redis_client):
    store = store_of(server)
    ada, bob, bot = (new_player(server, n, bot=n == "B0t") for n in ("Ada", "Bob", "B0t"))
    resign(server, "dekal", rated_match(server, "dekal", [ada, bob]), bob["token"])
    resign(server, "dekal", rated_match(server, "dekal", [bob, bot]), bob["token"])
    archive_due(server)
    before = store.current("dekal", [ada["id"], bob["id"], bot["id"]])
    ranks = {p["id"]: store.rank_of("dekal", False, p["id"]) for p in (ada, bob, bot)}
    assert None not in ranks.values()
    fresh_ratings(redis_client)
    assert not redis_client.exists(kept.READY)
    assert store.current("dekal", [ada["id"], bob["id"], bot["id"]]) == before
    assert redis_client.exists(kept.READY)
    after = {p["id"]: store.rank_of("dekal", False, p["id"]) for p in (ada, bob, bot)}
    order = sorted(ranks, key=lambda p: ranks[p])
    assert sorted(after, key=lambda p: after[p]) == order
    assert store.rank_of("dekal", True, bot["id"]) is not None
    assert store.rank_of("dekal", True, ada["id"]) is None
    # the boards lost, the ratings kept (an eviction, a partial restore)
    redis_client.delete(kept.READY, kept.board_key("dekal"), kept.board_key("dekal", True))
    again = {p["id"]: store.rank_of("dekal", False, p["id"]) for p in (ada, bob, bot)}
    assert again == after and store.rank_of("dekal", True, bot["id"]) is not None


def test_a_raised_minimum_takes_players_off_the_board_at_the_next_rebuild(server, redis_client):
    store = store_of(server)
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    resign(server, "dekal", rated_match(server, "dekal", [ada, bob]), bob["token"])
    assert store.rank_of("dekal", False, ada["id"]) is not None
    store.min_matches = 2
    try:
        redis_client.delete(kept.READY)
        assert store.rank_of("dekal", False, ada["id"]) is None
    finally:
        store.min_matches = 1
        redis_client.delete(kept.READY)
    assert store.rank_of("dekal", False, ada["id"]) is not None


def test_a_rebuild_keeps_what_redis_knows_better_and_runs_once(server, redis_client):
    store = store_of(server)
    ada = new_player(server, "Ada")
    newer = Rating(31.0, 5.0, 9)
    redis_client.delete(kept.READY)
    assert redis_client.set(kept.REBUILDING, "1", nx=True)  # another process rebuilds
    try:
        store.ready()
        assert not redis_client.exists(kept.READY)  # not twice at once
    finally:
        redis_client.delete(kept.REBUILDING)
    store.apply("dekal", [{"player": ada["id"], "after": newer.stored(), "bot": False}])
    with server.app.extensions["ludotheque.archive"].engine.begin() as connection:
        connection.execute(
            sa.insert(kept.ratings).values(
                game="dekal", player_id=ada["id"], mu=20.0, sigma=6.0, matches=3, updated_ms=1
            )
        )
    redis_client.delete(kept.READY)
    assert store.current("dekal", [ada["id"]]) == {ada["id"]: newer}


def test_a_deleted_player_is_never_listed_again(server, redis_client):
    store = store_of(server)
    ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
    resign(server, "dekal", rated_match(server, "dekal", [ada, bob]), bob["token"])
    assert store.rank_of("dekal", False, ada["id"]) is not None
    server.app.extensions["ludotheque.players"].delete(ada["id"])
    assert store.rank_of("dekal", False, ada["id"]) is None
    archive_due(server)  # the archiver's apply does not list it again
    assert store.rank_of("dekal", False, ada["id"]) is None
    fresh_ratings(redis_client)  # nor does a rebuild
    assert store.rank_of("dekal", False, ada["id"]) is None
    assert store.rank_of("dekal", False, bob["id"]) is not None


def test_ratings_and_leaderboards_work_on_redis_cluster(cluster_url, migrated_database_url):
    """Every ratings key shares the {ratings} slot: the Lua apply, the
    pipelines and the rebuild run on a cluster as on one Redis."""
    config = {"REDIS_URL": cluster_url, "REDIS_CLUSTER": True, "LEADERBOARD_MIN_MATCHES": 1}
    with LiveServer({**config, "DATABASE_URL": migrated_database_url}) as server:
        store = store_of(server)
        ada, bob = new_player(server, "Ada"), new_player(server, "Bob")
        resign(server, "dekal", rated_match(server, "dekal", [ada, bob]), bob["token"])
        archive_due(server)
        before = store.current("dekal", [ada["id"], bob["id"]])
        assert before[ada["id"]].matches == 1
        assert store.rank_of("dekal", False, ada["id"]) < store.rank_of("dekal", False, bob["id"])
        store.client.delete(kept.READY, kept.ratings_key("dekal"), kept.board_key("dekal"))
        assert store.current("dekal", [ada["id"], bob["id"]]) == before
        assert [e["player"] for e in store.top("dekal", False, 0, 10)] == [ada["id"], bob["id"]]
        server.app.extensions["ludotheque.players"].delete(ada["id"])
        assert store.rank_of("dekal", False, ada["id"]) is None
