"""Ratings of ranked matches: many players, one number each, per game.

A rated match (made by the ranked queue: ``match["rated"]``) is rated once,
when it ends, with openskill's Plackett-Luce model: each player's skill is
a belief, ``mu`` (the estimate) and ``sigma`` (its uncertainty), and a
match's ranking (``service.domain.endings``: a resignation ranks last, tied
seats share a rank) moves every player's ``mu`` towards what the ranking
shows and shrinks its ``sigma``. An aborted match is not rated (and a rated
match cannot be aborted: ``service.domain.access.check_abort``).

The change is computed in the write that ends the match (``ending``, a hook
of ``service.domain.commits``), from the ratings the store has then, and
kept in the match (``match["ratings"]``) and in its ``match_over`` event:
applying it afterwards (to Redis by a commit subscriber, to SQL by the
archiver) is idempotent, by the player's count of rated matches.

What a client sees of a rating (``shown``): ``rating``, a display number
from the ordinal ``mu - 3 * sigma`` (a rating the player is very likely to
be above), 1000 for a new player; ``provisional`` while ``sigma`` is above
:data:`PROVISIONAL_SIGMA` (some 8 to 10 two-player matches).

Only the seats players hold are rated (a built-in bot has no rating),
ranked among themselves as the outcome ranks their seats.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

from engines.core import Event, Game
from service.domain.endings import outcome_of

MODEL = PlackettLuce()  # openskill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300
DEFAULT_MU = MODEL.mu
DEFAULT_SIGMA = MODEL.sigma
# provisional above this uncertainty: a new player (sigma 8.33) leaves it
# after some 8 to 10 two-player matches, fewer in larger ones
PROVISIONAL_SIGMA = 6.5
DISPLAY_BASE = 1000  # a new player's display rating (its ordinal is 0)
DISPLAY_SCALE = 40  # display points per unit of ordinal


@dataclass(frozen=True)
class Rating:
    """One player's rating for one game; ``matches``: rated matches played."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    matches: int = 0

    def stored(self) -> dict[str, Any]:
        return {"mu": self.mu, "sigma": self.sigma, "matches": self.matches}

    @classmethod
    def of(cls, stored: dict[str, Any]) -> Rating:
        return cls(float(stored["mu"]), float(stored["sigma"]), int(stored["matches"]))


def display(rating: Rating) -> int:
    """The number a client shows: ``1000 + 40 * (mu - 3 * sigma)``, rounded."""
    return round(DISPLAY_BASE + DISPLAY_SCALE * (rating.mu - 3 * rating.sigma))


def is_provisional(rating: Rating) -> bool:
    return rating.sigma > PROVISIONAL_SIGMA


def shown(rating: Rating) -> dict[str, Any]:
    """What a client sees of a rating."""
    return {
        "rating": display(rating),
        "mu": rating.mu,
        "sigma": rating.sigma,
        "matches": rating.matches,
        "provisional": is_provisional(rating),
    }


def ranks_of(outcome: dict[str, Any] | None, n_seats: int) -> list[int] | None:
    """Each seat's rank (1: best; tied seats share one) in ``outcome``;
    None for a match that goes on, or was aborted (not rated)."""
    if outcome is None or outcome.get("ended_by") == "abort":
        return None
    ranking = outcome.get("ranking")
    if not ranking:  # an engine that names only its winners: the others share second place
        winners = set(outcome.get("winners") or [])
        if not winners:
            return None
        return [1 if seat in winners else 2 for seat in range(n_seats)]
    ranks = [len(ranking) + 1] * n_seats  # a seat the ranking leaves out: last
    for place, seats in enumerate(ranking, start=1):
        for seat in seats:
            ranks[seat] = place
    return ranks


def rated(game: Game, match: dict[str, Any], before: dict[str, Rating]) -> list[dict[str, Any]]:
    """The rating change of every seat a player holds in ``match``, which
    has ended: ``{"seat", "player", "rank", "before", "after"}`` (Ratings),
    ``before[player]`` its rating now (missing: a new player's). [] when the
    match is not rated: aborted, or fewer than two players."""
    ranks = ranks_of(outcome_of(game, match), len(match["seats"]))
    held = [(seat, s["player"]) for seat, s in enumerate(match["seats"]) if s.get("player")]
    if ranks is None or len(held) < 2:
        return []
    olds = [before.get(player) or Rating() for _, player in held]
    teams = [[MODEL.rating(mu=old.mu, sigma=old.sigma)] for old in olds]
    news = MODEL.rate(teams, ranks=[ranks[seat] for seat, _ in held])
    return [
        {
            "seat": seat,
            "player": player,
            "rank": ranks[seat],
            "before": old,
            "after": Rating(new[0].mu, new[0].sigma, old.matches + 1),
        }
        for (seat, player), old, new in zip(held, olds, news, strict=True)
    ]


def stored_changes(changes: list[dict[str, Any]], bots: set[str]) -> list[dict[str, Any]]:
    """The changes as the match keeps them (JSON); ``bots``: the players
    that are bot accounts (the bots' leaderboard lists them)."""
    return [
        {
            "seat": c["seat"],
            "player": c["player"],
            "rank": c["rank"],
            "bot": c["player"] in bots,
            "before": c["before"].stored(),
            "after": c["after"].stored(),
        }
        for c in changes
    ]


def shown_changes(stored: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes as the ``match_over`` event shows them."""
    return [
        {
            "seat": c["seat"],
            "player": c["player"],
            "before": shown(Rating.of(c["before"])),
            "after": shown(Rating.of(c["after"])),
        }
        for c in stored
    ]


Current = Callable[[str, list[str]], dict[str, Rating]]


def ending(current: Current) -> Callable[[Game, dict[str, Any], list[Event]], list[Event]]:
    """The hook of the write that ends a match (``Commits``' ``ending``):
    a rated match is rated here, from the ratings ``current(game, players)``
    reads now (``service.domain.ports.CurrentRatings.current``); the change
    is kept in the match and shown in its ``match_over`` event."""

    def amend(game: Game, match: dict[str, Any], events: list[Event]) -> list[Event]:
        if not match.get("rated") or not any(e["type"] == "match_over" for e in events):
            return events
        seats = [s for s in match["seats"] if s.get("player")]
        before = current(game.name, [s["player"] for s in seats])
        bots = {s["player"] for s in seats if s.get("bot_account")}
        match["ratings"] = stored_changes(rated(game, match, before), bots)
        seen = shown_changes(match["ratings"])
        return [{**e, "ratings": seen} if e["type"] == "match_over" else e for e in events]

    return amend
