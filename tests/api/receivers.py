"""Kept for bench/outbound.py: the receivers are tests.support.receivers."""

from tests.support.receivers import DripperFarm

__all__ = ["DripperFarm"]
