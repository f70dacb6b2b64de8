"""The lobby's rules: which listed matches it shows, and what it shows of
each (docs/clients/lobby.md; the index they are kept in: ``service.store.lobby``).

The lobby shows a match created with ``"listed": true`` while it waits
with an open seat, newest first; it lists the match when it is created with
open seats or a seat is left, and takes it off when it fills, starts or
ends. An entry shows the match's seats as anyone may see them: never a
token.
"""

from __future__ import annotations

from typing import Any

from engines.core import Event
from service.domain.views import is_open, public_seats


def open_seats(match: dict[str, Any]) -> list[int]:
    """The seats one may join; any makes the match a waiting one."""
    if match.get("ended"):
        return []
    return [seat for seat, held in enumerate(match["seats"]) if is_open(held)]


def listed_after(match: dict[str, Any], events: list[Event]) -> bool | None:
    """After a listed match's write of ``events``: True to list it, False
    to take it off the list, None to leave the list as it is."""
    kinds = {event["type"] for event in events}
    if open_seats(match):
        return True if kinds & {"match_created", "seat_left"} else None
    return False if kinds & {"seat_joined", "match_started", "match_over"} else None


def still_open(match: dict[str, Any] | None) -> list[int]:
    """The open seats of a match met in the list; none when the lobby shows
    it no more (gone, unlisted, full, started or over)."""
    return open_seats(match) if match and match.get("listed") else []


def fits(match: dict[str, Any], seats_open: list[int], players: int | None, min_open: int) -> bool:
    """Whether a page asking for ``players`` seats (None: any number) and at
    least ``min_open`` open seats shows ``match``."""
    return len(seats_open) >= min_open and players in (None, len(match["seats"]))


def entry(match: dict[str, Any], seats_open: list[int]) -> dict[str, Any]:
    """What the lobby shows of a match: never a token."""
    return {
        "id": match["id"],
        "players": len(match["seats"]),
        "open_seats": seats_open,
        "options": match["options"],
        "created_at": match["created_at"],
        "seats": public_seats(match),
    }
