"""Bearer tokens: what each kind looks like, and how a seat is held.

Every token the server hands out says what it is (so that secret scanners
find a leaked one): ``ldq_seat_`` (one seat of one match), ``ldq_player_``
(a player: every seat it holds) and ``ldq_app_`` (an app's key, server to
server), each followed by 32 random bytes, URL-safe. Only their SHA-256 is
stored. Seat tokens handed out before the prefixes keep working.

A seat stores the hash of whoever holds it: a seat token's, or, for a seat
a player holds, the hash of that player's *identity*, which the request's
player token resolves to (``service.http.credentials``). So a seat held by
a player is held by every token of that player, on every device, and by no
revoked or expired one; and everything that compares holders (who acts,
who follows, idempotency keys, the per-token limit) works the same for
both. An identity starts with a NUL byte and is refused wherever a client
sends one (``is_identity``); it also carries a MAC under the deployment's
secret, so that it cannot be made from a player's public id.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence

from service.domain.problems import Problem

SEAT = "ldq_seat_"
PLAYER = "ldq_player_"
APP = "ldq_app_"
IDENTITY = "\x00"  # starts every identity a token resolves to


def new_token(kind: str = SEAT) -> str:
    return kind + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def is_identity(token: str) -> bool:
    """Whether ``token`` is an identity (``service.store.players.Players.identity``:
    ``\\x00player:<id>:<its MAC under the deployment's secret>``): what the
    server makes of a player token or an app key, never what a client sends."""
    return token.startswith(IDENTITY)


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
