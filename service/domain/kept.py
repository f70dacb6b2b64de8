"""A process's memory of answers that never change (finished matches'
records and replays), bounded in bytes: the latest asked for stay, the
oldest go first."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class Kept:
    """Values by key, the least recently asked for dropped first while their
    sizes (as their owner counts them) add up to more than ``budget`` bytes.
    A value larger than the whole budget is never kept. Threads may share it."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.kept: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self.size = 0
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept under ``key`` (now the latest asked for), or None."""
        with self.lock:
            found = self.kept.get(key)
            if found is None:
                return None
            self.kept.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep ``value`` (of ``size`` bytes) unless a value is kept already."""
        with self.lock:
            if key in self.kept or size > self.budget:
                return
            self.kept[key] = (value, size)
            self.size += size
            self._fit()

    def grew(self, key: Hashable, value: Any, extra: int) -> None:
        """``value``, kept under ``key``, holds ``extra`` bytes more than it did
        (nothing when it is no longer kept, or was never)."""
        with self.lock:
            found = self.kept.get(key)
            if found is None or found[0] is not value:
                return
            self.kept[key] = (value, found[1] + extra)
            self.size += extra
            if found[1] + extra > self.budget:
                self.size -= self.kept.pop(key)[1]
            self._fit()

    def drop(self, key: Hashable) -> None:
        """Forget the value kept under ``key``, if any (it changed after all)."""
        with self.lock:
            found = self.kept.pop(key, None)
            if found is not None:
                self.size -= found[1]

    def clear(self) -> None:
        with self.lock:
            self.kept.clear()
            self.size = 0

    def _fit(self) -> None:
        while self.size > self.budget:
            _, (_, size) = self.kept.popitem(last=False)
            self.size -= size
