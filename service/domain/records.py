"""Finished matches' signed records, encoded once per process.

A record is built from the match's whole log (``Matches.record``: 0.4 to
1 s and 3 MB for a Ducale of 20,000 actions), and a finished match never
changes: ``Records`` keeps the signed records' JSON in a small LRU of this
process (bounded in bytes), by game, match and signing key. A record larger
than the whole budget is served, never kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from engines.core import Game
from service.domain import signing
from service.domain.kept import Kept

# Most records are 10 to 300 KB; a Ducale of 20,000 actions 3 MB, of
# 77,000 versions 12 MB.
CACHE_BYTES = 32 * 1024 * 1024


class Records:
    """``record(game, match_id)``: the match's record (raises the 404 of an
    unknown match, the 409 of one not over); ``key()``: the key that signs
    it now."""

    def __init__(
        self,
        record: Callable[[Game, str], dict[str, Any]],
        key: Callable[[], signing.RecordKey],
        budget: int = CACHE_BYTES,
    ) -> None:
        self.record = record
        self.key = key
        self.kept = Kept(budget)

    def encoded(self, game: Game, match_id: str) -> bytes:
        """The signed record of ``game``'s match ``match_id``, as JSON."""
        key = self.key()
        cached = (game.name, match_id, key.key_id)
        if (found := self.kept.get(cached)) is not None:
            return found
        body = orjson.dumps(signing.sign(self.record(game, match_id), key))
        self.kept.put(cached, body, len(body))
        return body
