"""The background tests' Redis: one per test module (the bot queue, the
webhooks' and the archive's are one per Redis), emptied for each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from service.store.embedded import EmbeddedRedis


@pytest.fixture(scope="module")
def module_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis"), persist=False) as url:
        yield url


@pytest.fixture
def private_redis(module_redis: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(module_redis) as client:
        client.flushdb()
        yield client
