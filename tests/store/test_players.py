"""Players, apps and tokens in the database, and their copy in Redis
(service/store/players.py), on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import redis
import sqlalchemy as sa

from service.domain.tokens import token_hash
from service.store import players as tables
from service.store.database import engine_for
from service.store.embedded import EmbeddedRedis
from tests.support.waiting import wait_until


@pytest.fixture
def players(migrated_database_url: str, redis_url: str) -> Iterator[tables.Players]:
    engine = engine_for(migrated_database_url)
    client = redis.Redis.from_url(redis_url)
    yield tables.Players(engine, client, token_ttl_s=3600)
    client.close()
    engine.dispose()


def forget_redis(client: redis.Redis) -> None:
    keys = list(client.scan_iter(match=tables.PREFIX + ":*", count=1000))
    if keys:
        client.delete(*keys)


def test_the_same_external_id_made_at_once_twice_is_one_player(players):
    app_id, _ = players.create_app("racing")
    found: list[str] = []
    barrier = threading.Barrier(8)

    def find() -> None:
        barrier.wait()
        player, _token, _new = players.for_app(app_id, "same-user", "Ada", False)
        found.append(player["id"])

    threads = [threading.Thread(target=find) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 8 and len(set(found)) == 1
    with players.engine.connect() as connection:
        count = connection.execute(
            sa.select(sa.func.count()).where(tables.players.c.external_id == "same-user")
        ).scalar()
    assert count == 1


def test_redis_lost_every_token_and_got_back_the_valid_ones_only(players):
    kept, kept_token = players.create("Kept")
    gone, gone_token = players.create("Gone")
    app_id, key = players.create_app("app")
    players.revoke(gone["id"])
    forget_redis(players.client)
    assert players.resolve(kept_token).id == kept["id"]  # from the database, then the copy rebuilt
    assert players.client.exists(tables.READY) == 1
    assert players.client.exists(tables.token_key(token_hash(kept_token))) == 1
    assert players.resolve(gone_token) is None
    assert players.resolve(key).app == app_id
    assert players.app_limits(app_id) == {}


def test_a_token_unknown_to_a_whole_copy_costs_no_database_read(players, monkeypatch):
    players.create("Someone")  # the copy is whole from here
    assert players.client.exists(tables.READY) == 1

    def no_database(*_args, **_kwargs):
        raise AssertionError("the database was read on the request path")

    monkeypatch.setattr(players, "_from_database", no_database)
    monkeypatch.setattr(players, "rebuild", no_database)
    assert players.resolve("ldq_player_" + "x" * 43) is None


def test_deleting_a_player_keeps_its_id_and_nothing_else(players):
    app_id, _ = players.create_app("deleting")
    player, token, _ = players.for_app(app_id, "user-7", "Bob", False)
    players.delete(player["id"])
    assert players.get(player["id"]) is None and players.resolve(token) is None
    with players.engine.connect() as connection:
        row = (
            connection.execute(
                sa.select(tables.players).where(tables.players.c.id == player["id"])
            )
            .mappings()
            .one()
        )
    assert row["name"] == tables.DELETED_NAME
    assert row["app_id"] is None and row["external_id"] is None and row["deleted_ms"]
    again, _, new = players.for_app(app_id, "user-7", "Bob", False)
    assert new and again["id"] != player["id"]


def test_an_app_revoked_ends_its_keys_and_its_players_tokens(players):
    app_id, key = players.create_app("ending")
    second = players.new_key(app_id, 2)
    _, token, _ = players.for_app(app_id, "u", "U", False)
    players.revoke_app(app_id)
    assert players.resolve(key) is None and players.resolve(second) is None
    assert players.resolve(token) is None
    with pytest.raises(LookupError):
        players.new_key(app_id, 1)


def test_a_stopped_token_cache_stops_listening_and_says_nothing_more(
    migrated_database_url: str, tmp_path, caplog
):
    """Its listener ran for ever: once the server was stopped and its Redis
    gone, it retried every half second and logged the loss with a traceback.
    In the suite, that traceback was formatted (by ast.parse, in Python
    3.11) while the next module's app compiled its routes (ast.parse too),
    and CPython 3.11's shared AST state failed the app's creation:
    "SystemError: AST constructor recursion depth mismatch"."""
    engine = engine_for(migrated_database_url)
    with EmbeddedRedis(tmp_path, persist=False) as url:
        client = redis.Redis.from_url(url)
        cache = tables.TokenCache(tables.Players(engine, client, token_ttl_s=3600))
        _player, token = cache.players.create("Ada")
        assert cache.resolve(token) is not None
        wait_until(lambda: cache.listening, timeout=5)
        listener = next(t for t in threading.enumerate() if t.name == "ludotheque-tokens")
        cache.stop()
        listener.join(timeout=3)
        assert not listener.is_alive()
        client.close()
    caplog.clear()
    time.sleep(1)
    assert not [r for r in caplog.records if "token revocations" in r.getMessage()]
    engine.dispose()
