"""Kept for bench/failover.py: Redis Clusters are tests.support.clusters."""

from tests.support.clusters import Cluster

__all__ = ["Cluster"]
