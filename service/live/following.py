"""Following matches, as the routes ask for it: a watch of a match as the
caller may follow it, a long poll of its log, a stream of one or more
matches (``service.live.followers`` does the following itself, over this
process's push hub, ``service.live.hub``).

Who may follow a match as which seat is the domain's to say
(``service.domain.access.follows_as``); reading the match, its own
(``service.domain.matches.Matches.load``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from engines.core import Game
from service.domain import access
from service.domain import tokens as auth
from service.domain.matches import Matches
from service.domain.views import status_of
from service.live.followers import Allowances, Bounds, Watch, long_poll, open_stream
from service.live.hub import Hub
from service.store.matches import Store


@dataclass(frozen=True)
class LiveSettings:
    keepalive_s: float = 10  # at most this long between two writes on an event stream
    bounds: Bounds = field(default_factory=Bounds)  # open streams and long polls
    ticket_ttl: int = 60  # seconds a stream ticket may wait for its first use


class Following:
    """This process's followers of matches: its push hub and the allowances
    that bound them."""

    def __init__(self, matches: Matches, store: Store, settings: LiveSettings, hub: Hub) -> None:
        self.matches = matches
        self.store = store
        self.settings = settings
        self.hub = hub
        self.allowances = Allowances(store.client, settings.bounds, self.hub)

    def watch(
        self,
        game: Game,
        match_id: str,
        token: str | None,
        after: int,
        revoked: Callable[[], bool] | None = None,
    ) -> tuple[Watch, bool]:
        """A follower's watch of the match as the caller (the token's seat as
        of now: a later change of its holder ends it, as does ``revoked()``
        becoming true), and whether it is over."""
        loaded = self.matches.load(game, match_id)
        seat = access.follows_as(loaded.match, self.matches.seat_for(loaded, token))
        watch = Watch(game, match_id, seat, after, since=loaded.version, revoked=revoked)
        return watch, status_of(game, loaded.match) == "finished"

    def events(
        self,
        game: Game,
        match_id: str,
        token: str | None,
        after: int,
        limit: int,
        wait_s: float = 0,
        address: str = "unknown",
        revoked: Callable[[], bool] | None = None,
    ) -> bytes:
        """The log after ``after`` as the caller may see it (JSON); with
        ``wait_s``, wait up to that long for an event the caller may see."""
        watch, _ = self.watch(game, match_id, token, after, revoked)
        watch.whole_log = True
        holders = [auth.token_hash(token)] if token else []
        return long_poll(
            self.store, self.hub, self.allowances, watch, limit, wait_s, address, holders
        )

    def stream(
        self,
        watches: list[Watch],
        finished: list[bool],
        address: str,
        holders: list[str],
        out: Any = None,
        on_close: Callable[[], None] | None = None,
        delivered: Callable[[list[int]], None] | None = None,
    ) -> tuple[Iterator[str], Callable[[], None]] | None:
        """Server-Sent Events of ``watches`` (see ``service.live.followers.open_stream``)."""
        return open_stream(
            self.store,
            self.hub,
            self.allowances,
            watches,
            finished,
            address,
            holders,
            self.settings.keepalive_s,
            out,
            on_close,
            delivered,
        )
