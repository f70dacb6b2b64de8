"""The background tests' Redis: one per test module (``module_redis``: the
bot queue, the webhooks' and the archive's are one per Redis), emptied for
each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis


@pytest.fixture
def private_redis(module_redis: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(module_redis) as client:
        client.flushdb()
        yield client
