"""Redis behind Sentinel, named by a URL.

``redis+sentinel://[[user]:password@]host[:port][,host[:port]...]/service[/db]``
(``rediss+sentinel://`` for TLS to the Redis servers): the Sentinels to ask,
the name they monitor the primary under (default ``mymaster``) and the
database (default 0). The password is the Redis servers'; the Sentinels are
asked without one unless ``?sentinel_password=...`` is given. Port 26379 is
the default. The client follows the primary the Sentinels name: after a
failover, its connections to the old primary fail (503) and new ones go to
the new primary.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import redis
from redis.sentinel import Sentinel

SENTINEL_SCHEMES = ("redis+sentinel://", "rediss+sentinel://")
SENTINEL_PORT = 26379


def parse_sentinel_url(url: str) -> dict[str, Any]:
    """The parts of a ``redis+sentinel://`` URL (see the module docstring)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    username = password = None
    if "@" in netloc:
        credentials, netloc = netloc.rsplit("@", 1)
        user, _, secret = credentials.partition(":")
        username, password = unquote(user) or None, unquote(secret) or None
    hosts = []
    for host in netloc.split(","):
        one = urlsplit(f"//{host}")  # handles [v6]:port
        hosts.append((one.hostname or "localhost", one.port or SENTINEL_PORT))
    path = [segment for segment in parts.path.split("/") if segment]
    query = parse_qs(parts.query)
    return {
        "sentinels": hosts,
        "service": unquote(path[0]) if path else "mymaster",
        "db": int(path[1]) if len(path) > 1 else 0,
        "username": username,
        "password": password,
        "sentinel_password": query.get("sentinel_password", [None])[0],
        "ssl": parts.scheme.startswith("rediss"),
    }


def sentinel_client(url: str, max_connections: int, **common: Any) -> redis.Redis:
    """A client of the primary that the Sentinels of ``url`` name."""
    found = parse_sentinel_url(url)
    sentinel_kwargs = {k: v for k, v in common.items() if k.startswith("socket_")}
    if found["sentinel_password"]:
        sentinel_kwargs["password"] = found["sentinel_password"]
    sentinel = Sentinel(found["sentinels"], sentinel_kwargs=sentinel_kwargs)
    return sentinel.master_for(
        found["service"],
        db=found["db"],
        username=found["username"],
        password=found["password"],
        ssl=found["ssl"],
        max_connections=max_connections,
        health_check_interval=30,
        **common,
    )
