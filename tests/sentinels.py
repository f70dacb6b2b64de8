"""Kept for bench/failover.py: Sentinel groups are tests.support.sentinels."""

from tests.support.sentinels import SentinelGroup

__all__ = ["SentinelGroup"]
