"""The matches' wake-up channels (the push hub that listens to them:
``service.live.hub``).

The write that appends events to a match's log also publishes its new last
index on ``m:{id}:wake`` (``service.store.matches``), in the match's own
slot: ``SPUBLISH`` on Redis Cluster, whose sharded channels are served by
the node that holds the slot. A listener holds one subscriber connection per
node, configured as the store's own connections but waiting for messages as
long as it must.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import redis
from redis.backoff import NoBackoff
from redis.cluster import RedisCluster
from redis.retry import Retry

Connect = Callable[[], redis.Redis]


def wake_channel(match_id: str) -> str:
    """The channel a match's writes publish on: in the match's slot."""
    return f"m:{{{match_id}}}:wake"


def channel_match(channel: bytes | str) -> str | None:
    """The match whose wake-ups ``channel`` carries."""
    text = channel.decode() if isinstance(channel, bytes) else channel
    start, end = text.find("{"), text.find("}")
    return text[start + 1 : end] if 0 <= start < end else None


def sharded(client: object) -> bool:
    """Whether ``client``'s channels are sharded (a cluster's ``SSUBSCRIBE``)."""
    return isinstance(client, RedisCluster)


def channels_by_node(
    client: redis.Redis | RedisCluster, match_ids: Iterable[str]
) -> dict[str, tuple[Connect, set[str]]]:
    """The wake-up channels of ``match_ids``, by the node that serves them:
    how to connect a subscriber there, and its channels."""
    by_node: dict[str, tuple[Connect, set[str]]] = {}
    for match_id in match_ids:
        channel = wake_channel(match_id)
        if isinstance(client, RedisCluster):
            node = client.get_node_from_key(channel)
            name = node.name
            if name not in by_node:
                by_node[name] = (_node_connector(client, node.host, node.port), set())
        else:
            name = "redis"
            if name not in by_node:
                by_node[name] = (_like(client.connection_pool), set())
        by_node[name][1].add(channel)
    return by_node


def _node_connector(client: RedisCluster, host: str, port: int) -> Connect:
    return _like(client.get_node(host=host, port=port).redis_connection.connection_pool)


def _like(pool: redis.ConnectionPool) -> Connect:
    """A client for one subscriber connection, configured as ``pool``'s, that
    waits for messages as long as it must, and never reconnects by itself:
    its commands come from more than one thread (the listener reads, the
    followers subscribe), so a lost connection ends it, and the listener
    makes a new one (two threads reconnecting one connection leaked a
    socket)."""
    never = Retry(NoBackoff(), 0, supported_errors=())
    kwargs = dict(pool.connection_kwargs) | {
        "socket_timeout": None,
        "retry": never,
        "retry_on_error": [],
    }
    return lambda: redis.Redis(
        connection_pool=redis.ConnectionPool(connection_class=pool.connection_class, **kwargs)
    )
