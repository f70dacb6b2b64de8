"""Kept for bench/failover.py: the client is tests.support.client."""

from tests.support.client import ApiClient

__all__ = ["ApiClient"]
