"""Store trouble: which errors mean "the store cannot answer now, try again".

A store that is unreachable, failing over or refusing writes for a while is
not a bug: the service answers 503 ``store_unavailable`` with Retry-After,
streams end so that clients reconnect, and bot workers back off. Whatever
else redis-py raises (a wrong script, a cross-slot command, a bad argument)
stays a bug, answered 500.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterator

from redis import exceptions

from service.domain.ports import NotReplicated

log = logging.getLogger(__name__)


# Unreachable, timing out, failing over, loading, read-only, out of memory,
# or a cluster whose slots are not all served (redirections included: a
# client that ran out of them saw the topology move under it).
TROUBLE = (
    exceptions.ConnectionError,  # with MasterNotFoundError, BusyLoadingError, MaxConnectionsError
    exceptions.TimeoutError,
    exceptions.ClusterError,  # ClusterDownError, MasterDownError, "TTL exhausted"
    exceptions.TryAgainError,
    exceptions.AskError,  # and MovedError
    exceptions.ReadOnlyError,
    exceptions.OutOfMemoryError,
    exceptions.SlotNotCoveredError,
    NotReplicated,
)

# What the store raises when it has trouble: redis-py's errors, and its
# cluster client's own (a cluster that cannot be reached at all).
STORE_ERRORS = (exceptions.RedisError, exceptions.RedisClusterException)

# Refusals redis-py leaves as a plain ResponseError, by their first word:
# a script or module running too long (BUSY), a primary that cannot persist
# (MISCONF), too few replicas for min-replicas-to-write (NOREPLICAS).
REFUSALS = {"BUSY", "MISCONF", "NOREPLICAS", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "LOADING"}

# RedisClusterException is no RedisError; these words mark the ones that
# mean the cluster is out of reach rather than misused.
CLUSTER_OUT_OF_REACH = (
    "cannot be connected",
    "could not agree",
    "are not covered",
    "has no redis_connection",
    "doesn't exist in the cluster",
)


def is_store_trouble(error: BaseException) -> bool:
    """True when ``error`` says the store cannot serve now (503), not a bug."""
    if isinstance(error, exceptions.ClusterCrossSlotError):
        return False
    if isinstance(error, TROUBLE):
        return True
    if isinstance(error, exceptions.ResponseError):
        words = str(error).split()
        return bool(words) and words[0] in REFUSALS
    if isinstance(error, exceptions.RedisClusterException):
        text = str(error).lower()
        return any(word in text for word in CLUSTER_OUT_OF_REACH)
    return False


STORE_GONE = "the store is unavailable; reconnect with Last-Event-ID"


def ending_cleanly(body: Iterator[str], note: str) -> Iterator[str]:
    """An event stream that, when the store fails under it, ends with the
    comment ``note`` instead of a cut body, so the client reconnects."""
    try:
        yield from body
    except Exception as error:
        if not is_store_trouble(error):
            raise
        log.warning("a stream ends, the store being unavailable: %s", error)
        yield f": {note}\n\n"


class StoreBackoff:
    """How long a loop waits between tries while the store is unavailable:
    from ``first_s``, doubling up to ``cap_s``, with jitter so that many
    workers do not all come back at once."""

    def __init__(self, first_s: float = 0.1, cap_s: float = 5.0, what: str = "the store") -> None:
        self.first_s = first_s
        self.cap_s = cap_s
        self.what = what
        self.failures = 0

    def next_wait(self, error: BaseException) -> float:
        self.failures += 1
        if self.failures == 1:
            log.warning("%s is unavailable, backing off: %s", self.what, error)
        return random.uniform(0.5, 1.0) * min(self.cap_s, self.first_s * 2 ** (self.failures - 1))

    def over(self) -> None:
        if self.failures:
            log.info("%s is back after %d failed tries", self.what, self.failures)
        self.failures = 0
