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
        stored: Callable[[Game, str], bytes | None] = lambda game, match_id: None,
        budget: int = CACHE_BYTES,
    ) -> None:
        """``stored(game, match_id)``: the record as the archive keeps it,
        signed when archived (None: not archived)."""
        self.record = record
        self.key = key
        self.stored = stored
        self.kept = Kept(budget)

    def encoded(self, game: Game, match_id: str) -> bytes:
        """The signed record of ``game``'s match ``match_id``, as JSON."""
        key = self.key()
        cached = (game.name, match_id, key.key_id)
        if (found := self.kept.get(cached)) is not None:
            return found
        # archived, and signed by this key: as it is (no log to read, nothing
        # to sign again: 25 MB records cost seconds to build)
        body = self.stored(game, match_id)
        if body is None or signed_by(body, key) is False:
            body = orjson.dumps(signing.sign(self.record(game, match_id), key))
        self.kept.put(cached, body, len(body))
        return body

    def forget(self, game: Game, match_id: str) -> None:
        """Drop the match's record kept by this process (a deleted player's
        name was taken out of it)."""
        self.kept.drop((game.name, match_id, self.key().key_id))


def signed_by(body: bytes, key: signing.RecordKey) -> bool:
    """Whether the encoded record ``body`` names ``key`` as its signer: its
    only ``"key_id":"`` with bare quotes is the signature's (orjson escapes
    every quote within a string)."""
    return f'"key_id":"{key.key_id}"'.encode() in body
