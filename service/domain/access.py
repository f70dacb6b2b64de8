"""Who may see and do what: the one place that decides.

A request speaks for a *viewer*: the seat its bearer token holds in the
match (the token's SHA-256 is stored in the seat), or nobody, a spectator.
Every read and write path asks this module, and nothing else decides:

- which seat a token holds: ``seat_of`` (a token that holds no seat is
  refused, never taken for a spectator);
- whose secrets a view, its legal actions and the events show:
  ``sees_as``. Before the match starts, nobody's: a seat may still change
  hands then (leave, join), so whoever holds it now must not see the hand,
  pile or objective that the next holder would play. From the start on, a
  seat sees its own, until it resigns (a bot plays it then). Outside
  readers (webhooks, the lobby, records) see what a spectator sees
  (``OUTSIDE_READER``, ``check_record``);
- which seat may act, join, leave, resign, abort or ask for a rematch:
  the ``check_*`` functions, each refusing with the Problem a client sees;
- whether a follower (event stream, stream ticket, long poll) may go on
  as its seat: ``may_follow_as``, ``ends_following``: only while the seat
  is still held by the token it was opened with; and which events a used
  ticket must never show again: ``private_to``.

Who pays: a match's ``creator`` (the address that created it, or that
caused a rematch) is charged its creation and its waiting time; a bot seat
is charged to whoever seated it (``payer_of``): the creator, or a joiner
who gave a seat to a bot. Addresses are kept for quotas only and never
leave the server (see ``service.domain.views.public_seats`` and the record).

The rules per operation, with what each reveals and costs: docs/operators/security.md.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping, Sequence
from typing import Any

from service.domain import tokens as auth
from service.domain.problems import Problem

Match = dict[str, Any]


# -- seeing ----------------------------------------------------------------------
def seat_of(match: Match, token: str | None) -> int | None:
    """The seat ``token`` holds (None without a token: a spectator); 403 for
    a token that holds no seat, a seat left or taken over since included."""
    if token is None:
        return None
    return auth.seat_of(token, [s["token"] for s in match["seats"]])


def sees_as(match: Match, status: str, seat: int | None) -> int | None:
    """The seat whose hidden information a viewer of ``seat`` may see in
    ``match`` (of ``status``): none before the start (a spectator's view),
    none once the seat resigned (a bot plays it: what it holds is no longer
    its resigner's to see, nor to tell the other players)."""
    if status == "waiting" or seat in match.get("resigned", ()):
        return None
    return seat


# Outside readers see what a spectator sees: a webhook's receiver (the
# events it is sent), the lobby (public seats), and anyone reading a record.
OUTSIDE_READER = None


def check_record(status: str) -> None:
    """Anyone may read a match's record, once the match is over (it reveals
    the seed, every action and the outcome)."""
    if status != "finished":
        raise Problem(409, "match_not_over", "a match's record is readable once the match is over")


# -- following ------------------------------------------------------------------
# A follower (an event stream, a stream ticket, a long poll of the events or
# of a view) is opened as a seat for the token that held it then; it follows
# as that seat only while that token still holds it. The log says when a
# seat changes hands (``seat_left``, ``seat_joined``, and ``resigned``: a
# bot takes the seat over), so a follower checks the events it delivers,
# not the match, and costs nothing more per event.

SEAT_CHANGES = frozenset({"seat_left", "seat_joined", "resigned"})


def follows_as(match: Match, seat: int | None) -> int | None:
    """The seat a follower opened now with the token of ``seat`` follows
    as: a spectator once the seat resigned."""
    return None if seat in match.get("resigned", ()) else seat


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
    if stored is None or seats[seat].get("bot"):  # left, or resigned: a bot plays it
        return False
    return hmac.compare_digest(stored, holder)


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


# -- doing -----------------------------------------------------------------------
def acts_now(match: Match, status: str, seat: int | None, to_act: list[int]) -> bool:
    """Whether ``seat`` is to act now, so that its legal actions are listed
    (they show its hand): never a spectator's, nor a resigned seat's."""
    return (
        status == "active"
        and seat is not None
        and seat not in match.get("resigned", ())
        and seat in to_act
    )


def check_act(match: Match, status: str, seat: int, to_act: list[int]) -> None:
    """``seat`` may play an action now in ``match`` (of ``status``)."""
    if status == "waiting":
        raise Problem(409, "match_not_started", "some seats are still open")
    if status == "finished":
        raise Problem(409, "match_over", "this match is over")
    if seat in match.get("resigned", ()):
        raise Problem(409, "seat_resigned", f"seat {seat} resigned; a bot plays it")
    if seat not in to_act:
        raise Problem(409, "not_your_turn", f"seat {seat} is not to act now")


def check_join(match: Match, seat: int) -> None:
    """Anyone may take ``seat`` of ``match`` if it is open."""
    seats = match["seats"]
    if match.get("seeded"):
        raise Problem(422, "seed_not_allowed", "nobody joins a match whose seed was chosen")
    if not 0 <= seat < len(seats):
        raise Problem(404, "seat_not_found", f"this match has seats 0 to {len(seats) - 1}")
    if match.get("ended"):  # aborted while waiting
        raise Problem(409, "match_over", "this match is over")
    if seats[seat].get("awaits"):
        raise Problem(409, "seat_reserved", f"seat {seat} awaits its rematch holder")
    if seats[seat]["token"] is not None or seats[seat].get("bot"):
        raise Problem(409, "seat_taken", f"seat {seat} is already taken")


def check_leave(match: Match, status: str, holder: int, seat: int) -> None:
    """The holder of ``seat`` may give it back, before the start only."""
    if holder != seat:
        raise Problem(403, "not_your_seat", f"this token holds seat {holder}, not {seat}")
    check_not_over(status)
    if status == "active":
        raise Problem(409, "match_started", "a seat can be left only before the start")
    if match.get("seeded"):
        raise Problem(
            409, "seeded_match", "a match whose seed the creator chose never has an open seat"
        )


def check_resign(match: Match, status: str, seat: int) -> None:
    """A seat still playing a started match may resign."""
    check_not_over(status)
    if status == "waiting":
        raise Problem(409, "match_not_started", "some seats are still open")
    if seat in match.get("resigned", ()):
        raise Problem(409, "seat_resigned", f"seat {seat} has already resigned")


def check_abort(match: Match, status: str, seat: int) -> None:
    """A seat the match was created with (not one a stranger joined) may
    call it off while no person has acted."""
    check_not_over(status)
    if match.get("rated"):  # else a matched player would dodge a rated match unrated
        raise Problem(
            409, "rated_match", "a rated match cannot be called off: resign instead (ranked last)"
        )
    if match["seats"][seat].get("joined"):
        raise Problem(
            403,
            "not_creator",
            "only a seat the match was created with may call it off; leave the seat instead",
        )
    if match.get("human_acted"):
        raise Problem(409, "abort_too_late", "a seat has acted: resign instead")


def check_rematch(status: str) -> None:
    """Any seat of a match that has ended may offer or accept its rematch."""
    if status != "finished":
        raise Problem(409, "match_not_over", "a rematch is for a match that has ended")


def check_not_over(status: str) -> None:
    if status == "finished":
        raise Problem(409, "match_over", "this match is over")


# -- paying ----------------------------------------------------------------------
def payer_of(match: Match, seat: int) -> str:
    """The address a bot in ``seat`` is charged to ('' for nobody)."""
    return match["seats"][seat].get("payer") or match.get("creator") or ""
