"""A Redis that answers but refuses (a read-only replica, out of memory, busy
running a script) is store trouble: 503 store_unavailable with Retry-After,
never 500. A genuine bug (a wrong script) stays a 500."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import redis

from service.store.embedded import EmbeddedRedis
from service.store.outages import is_store_trouble
from tests.support.client import ApiClient
from tests.support.problems import assert_problem

GAME = "dekal"
PLAYERS = {"players": [{"name": "A"}, {"name": "B"}]}


@pytest.fixture
def own_redis(tmp_path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "redis", persist=False)
    server.start()
    yield server
    server.stop()


def assert_unavailable(answer) -> None:
    assert_problem(answer, 503, "store_unavailable")
    assert answer.headers["Retry-After"] == "1"


def test_a_read_only_replica_answers_503(own_redis, tmp_path, live_server):
    replica = EmbeddedRedis(tmp_path / "replica", persist=False)
    replica.start()
    server = live_server(REDIS_URL=replica.url)
    try:
        with redis.Redis.from_url(replica.url) as client:
            client.replicaof("127.0.0.1", own_redis.port)
        assert_unavailable(ApiClient(server.base).create(GAME, PLAYERS))
    finally:
        replica.stop()


def test_a_redis_out_of_memory_answers_503(own_redis, live_server):
    server = live_server(REDIS_URL=own_redis.url)
    api = ApiClient(server.base)
    created = api.create(GAME, PLAYERS).json()
    with redis.Redis.from_url(own_redis.url) as client:
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", 1)
    assert_unavailable(api.create(GAME, PLAYERS))
    assert api.get(GAME, created["id"]).status_code == 200, "reads still work"


def test_a_redis_busy_running_a_script_answers_503(own_redis, live_server):
    server = live_server(REDIS_URL=own_redis.url)
    api = ApiClient(server.base)
    created = api.create(GAME, PLAYERS).json()
    with redis.Redis.from_url(own_redis.url) as client:
        client.config_set("busy-reply-threshold", 50)
    spin = (
        "local t = redis.call('TIME') "
        "while true do local n = redis.call('TIME') "
        "if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > 2000000 then break end end"
    )
    busy = redis.Redis.from_url(own_redis.url)
    spinner = threading.Thread(target=busy.eval, args=(spin, 0))
    spinner.start()
    time.sleep(0.3)
    assert_unavailable(api.get(GAME, created["id"]))
    spinner.join()
    busy.close()
    assert api.get(GAME, created["id"]).status_code == 200


def test_a_wrong_script_or_command_is_a_bug_not_store_trouble(own_redis):
    with redis.Redis.from_url(own_redis.url) as client:
        with pytest.raises(redis.ResponseError) as wrong_script:
            client.eval("return redis.call('NO_SUCH_COMMAND')", 0)
        with pytest.raises(redis.ResponseError) as wrong_type:
            client.set("a-string", "x")
            client.hget("a-string", "field")
    assert not is_store_trouble(wrong_script.value)
    assert not is_store_trouble(wrong_type.value)
    assert is_store_trouble(redis.exceptions.ResponseError("BUSY Redis is busy running a script"))
