"""Seat tokens: 32 random bytes, URL-safe; only their SHA-256 is stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

from service.domain.problems import Problem


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def seat_of(token: str, seat_hashes: Sequence[str | None]) -> int:
    """The seat whose stored hash matches ``token``; 403 when none does.

    Every seat is compared, in constant time, whatever matches first.
    """
    digest = token_hash(token)
    found = None
    for seat, stored in enumerate(seat_hashes):
        if stored is not None and hmac.compare_digest(stored, digest):
            found = seat
    if found is None:
        raise Problem(403, "invalid_token", "this token holds no seat in this match")
    return found
