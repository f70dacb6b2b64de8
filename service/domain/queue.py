"""The ranked queue's matchmaking, as pure functions: which waiting tickets
make a match now (``groups``), and which house bots fill the seats left
empty after a long wait (``house_seats``). The loop that runs it:
``service.background.matchmaker``; the tickets: ``service.store.queue``.

Nakama's matchmaker's shape: each ticket accepts opponents within a window
that widens with its waiting time. Here the window is a gap of strength
(openskill's mu): a group is made when its strongest and weakest members
are no further apart than the gap its longest-waiting member accepts,
``base_gap + widen_per_s * waited``. The longest-waiting ticket is served
first; its opponents are the closest in strength. A player is never seated
twice in a match; players who met in one of their last few matches are
paired again only when nobody else fits and the ticket has waited
``rematch_after_s``.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.core import Game
from service.domain.ports import Loaded
from service.domain.views import status_of


@dataclass(frozen=True)
class Preset:
    """A queue of a game: its matches' seats and options."""

    name: str
    players: int
    options: dict[str, Any]  # the match options, turn_timeout_s included
    bot_after_s: float | None

    def shown(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "players": self.players,
            "options": self.options,
            "turn_timeout_s": self.options.get("turn_timeout_s"),
            "bot_after_s": self.bot_after_s,
        }


Presets = dict[str, dict[str, Preset]]  # game -> name -> preset

CLAIM_S = 60.0  # a matchmaker's claim on a player (its match being made) lasts this long


def claim_of(now_ms: int, nonce: str) -> str:
    return f"claim:{now_ms}:{nonce}"


def still_playing(
    game: Game, named: str, load: Callable[[str], Loaded | None], now_ms: int
) -> bool:
    """Whether a player whose index names ``named`` for ``game``'s rated
    play (``service.store.queue.Queue.ranked``) plays a rated match of it
    now: a match not finished (``load``: the store's), or a matchmaker's
    claim younger than CLAIM_S. One live rated match per player and game:
    its rating then changes through one match at a time, never from a
    stale one."""
    if not named:
        return False
    if named.startswith("claim:"):
        return now_ms - int(named.split(":")[1]) < CLAIM_S * 1000
    loaded = load(named)
    return loaded is not None and status_of(game, loaded.match) != "finished"


@dataclass(frozen=True)
class Waiting:
    """A waiting ticket as the matchmaker sees it."""

    ticket: str
    player: str
    joined: float  # seconds (time.time())
    mu: float = 25.0
    recent: frozenset[str] = field(default_factory=frozenset)  # its last opponents


@dataclass(frozen=True)
class Policy:
    """How far apart in strength a match may be, by waiting time."""

    base_gap: float = 2.0  # mu apart, accepted at once
    widen_per_s: float = 0.5  # more accepted per second of waiting
    max_gap: float = float("inf")
    rematch_after_s: float = 20.0  # a recent opponent accepted after this long

    def gap(self, waited_s: float) -> float:
        return min(self.max_gap, self.base_gap + self.widen_per_s * max(0.0, waited_s))


def groups(
    waiting: Sequence[Waiting], size: int, now: float, policy: Policy | None = None
) -> list[list[Waiting]]:
    """The matches to make now, each ``size`` tickets of distinct players
    (its first: the longest-waiting; then by strength)."""
    if size < 1:
        return []
    policy = policy or Policy()
    free = sorted(waiting, key=lambda w: (w.mu, w.joined, w.ticket))
    mus = [w.mu for w in free]
    used: set[str] = set()
    made = []
    for anchor in sorted(waiting, key=lambda w: (w.joined, w.ticket)):
        if anchor.ticket in used:
            continue
        waited = now - anchor.joined
        gap = policy.gap(waited)
        low = bisect.bisect_left(mus, anchor.mu - gap)
        high = bisect.bisect_right(mus, anchor.mu + gap)
        near = [
            w
            for w in free[low:high]
            if w.ticket not in used and w.ticket != anchor.ticket and w.player != anchor.player
        ]
        near.sort(key=lambda w: (abs(w.mu - anchor.mu), w.joined, w.ticket))
        group = pick(anchor, near, size, gap, rematches=False)
        if group is None and waited >= policy.rematch_after_s:
            group = pick(anchor, near, size, gap, rematches=True)
        if group is None:
            continue
        used.update(w.ticket for w in group)
        made.append(group)
    return made


def pick(
    anchor: Waiting, near: list[Waiting], size: int, gap: float, rematches: bool
) -> list[Waiting] | None:
    """``anchor`` and the closest of ``near`` that keep the group's spread
    within ``gap``, its players distinct and (unless ``rematches``) strangers
    to each other; None when fewer than ``size`` fit."""
    group = [anchor]
    low = high = anchor.mu
    for candidate in near:
        if len(group) == size:
            break
        if any(candidate.player == w.player for w in group):
            continue
        if not rematches and any(met(candidate, w) for w in group):
            continue
        if max(high, candidate.mu) - min(low, candidate.mu) > gap:
            continue
        group.append(candidate)
        low, high = min(low, candidate.mu), max(high, candidate.mu)
    return group if len(group) == size else None


def met(a: Waiting, b: Waiting) -> bool:
    return b.player in a.recent or a.player in b.recent


def overdue(waiting: Sequence[Waiting], now: float, bot_after_s: float | None) -> list[Waiting]:
    """The tickets that have waited ``bot_after_s`` (longest first): each
    plays now, its empty seats given to bots."""
    if bot_after_s is None:
        return []
    return sorted(
        (w for w in waiting if now - w.joined >= bot_after_s), key=lambda w: (w.joined, w.ticket)
    )


def house_seats(bots: dict[str, float], needed: int, mu: float) -> list[str] | None:
    """``needed`` of the house bot accounts ``bots`` (id -> strength), the
    closest in strength to ``mu``; None when there are not enough."""
    if needed > len(bots):
        return None
    return sorted(bots, key=lambda b: (abs(bots[b] - mu), b))[:needed]


def spread(mus: Sequence[float]) -> float:
    """How far apart a match's strongest and weakest are."""
    return max(mus) - min(mus) if mus else 0.0
