"""Stream tickets: how a browser's ``EventSource`` follows as a seat, and
how one stream follows several matches.

``EventSource`` cannot send an ``Authorization`` header, and a token must
never travel in a URL (logs, history, referrers keep URLs). So the holder
of a token exchanges it (in a header or a body) for a ticket: random, short
lived (``ticket_ttl``, 60 s by default, to be used), and single-use: the
first ``GET`` that presents it opens the stream; from then on it is good
only for that stream's own reconnections (``EventSource`` sends
``Last-Event-ID``), while a connection holds it and for a while after the
last one closed. A reconnection takes the ticket over from the connection
that holds it, which may be dead without the server knowing (a client that
changed networks sent no reset): refusing it would stop the EventSource for
good. Only the ticket's SHA-256 is stored, with what it follows: each
match, its game and the seat it follows as (the tokens' hashes count the
stream against their allowance).

A ticket follows as a seat only while the token it was made with holds it
(issue 31): once the seat changed hands, the ticket, used or not, is
refused, and its stream ends (``service.live.followers``). A used ticket is a bearer
credential anyone holding its URL may present, so it never replays the
past: it keeps a floor, the cursors its stream reaches with its first
write and with each write of an event private to a followed seat (kept
before the write goes out, so that no reconnection can race it), and a
reconnection's ``Last-Event-ID`` (or ``?after=``) below it is raised to it.
"""

from __future__ import annotations

from typing import Any

from engines import GAMES
from service.domain import tokens as auth
from service.domain.access import may_follow_as
from service.domain.problems import Problem
from service.store import tickets as store

MAX_MATCHES = 32  # matches one ticket may follow

# a 401 names the scheme to use, as every 401 of the service does
TICKET_REALM = {"WWW-Authenticate": 'Bearer realm="ludotheque"'}


def redeem(client: Any, ticket: str, resuming: bool, lease_s: float) -> store.Redeemed:
    """What ``ticket`` follows, the connection id that now holds it (to
    ``release``), and the cursors it may not resume before (one per match
    followed); 401 when it is unknown, expired, or used and this is not a
    reconnection."""
    try:
        return store.redeem(client, ticket, resuming, lease_s)
    except store.Refused as refused:
        detail = (
            "this stream ticket was used; take a new one"
            if refused.used
            else "this stream ticket is unknown or expired"
        )
        raise Problem(401, "invalid_ticket", detail, headers=TICKET_REALM) from None


def check_holder(follow: dict[str, Any], seats: list[dict[str, Any]]) -> None:
    """401 unless the ticket's token still holds the seat it follows as."""
    if not may_follow_as(seats, follow["seat"], follow["token"]):
        raise Problem(
            401,
            "invalid_ticket",
            f"seat {follow['seat']} changed hands since this ticket was taken; take a new one",
            headers=TICKET_REALM,
        )


def follows_of(live: Any, wanted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Check each wanted match and token: what a ticket for them follows."""
    follows = []
    named = [(item["game"], item["match"]) for item in wanted]
    if len(set(named)) < len(named):
        # one follower per match and stream: a second would be fed nothing
        raise Problem(
            422,
            "invalid_request",
            "a ticket follows each match once; to follow two seats of one match, "
            "take a ticket for each",
        )
    for item in wanted:
        game = GAMES.get(item["game"])
        if game is None:
            raise Problem(404, "game_not_found", f"no game {item['game']!r}; see /v1/games")
        token = item.get("token")
        watch, _ = live.watch(game, item["match"], token, 0)
        follows.append(
            {
                "game": game.name,
                "match": item["match"],
                "seat": watch.seat,
                "token": auth.token_hash(token) if token else None,
            }
        )
    return follows
