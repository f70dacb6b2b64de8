"""Who may see and do what: one place for the decisions, as small pure
functions over a match's stored seats (no Flask, no Redis), so that every
read and write path asks the same question the same way (issue 31, point 2).
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from typing import Any

# -- following ------------------------------------------------------------------
# A follower (an event stream, a stream ticket, a long poll of the events or
# of a view) is opened as a seat for the token that held it then; it follows
# as that seat only while that token still holds it. The log says when a
# seat changes hands (``seat_left``, ``seat_joined``), so a follower checks
# the events it delivers, not the match, and costs nothing more per event.

SEAT_CHANGES = frozenset({"seat_left", "seat_joined"})


def may_follow_as(
    seats: Sequence[Mapping[str, Any]], seat: int | None, holder: str | None
) -> bool:
    """Whether a follower opened for ``holder`` (a token's hash; None: no
    token) may follow as ``seat`` (None: a spectator, which anyone may) in a
    match whose stored seats are ``seats``: only while ``holder`` holds it."""
    if seat is None:
        return True
    if holder is None or not 0 <= seat < len(seats):
        return False
    stored = seats[seat].get("token")
    return stored is not None and hmac.compare_digest(stored, holder)


def ends_following(event: Mapping[str, Any], seat: int | None, since: int) -> bool:
    """Whether ``event`` takes ``seat`` from the holder a follower was
    checked against at version ``since``: a later ``seat_left`` or
    ``seat_joined`` of that seat (a spectator's following never ends so)."""
    return (
        seat is not None
        and event.get("type") in SEAT_CHANGES
        and event.get("seat") == seat
        and event.get("version", 0) > since
    )


def private_to(event: Mapping[str, Any], seat: int | None) -> bool:
    """Whether ``event`` is one only some seats see, ``seat`` among them:
    what a stolen stream ticket must never show again (point 9)."""
    to = event.get("to")
    return to is not None and seat is not None and seat in to
