"""The ranked queue's matchmaker, run by ``ludotheque worker`` beside the
bot turns and the archiver (``service.background.worker``).

Each round it takes each queue (a game's preset) it can lease, so that two
workers never match the same queue at once, and makes the matches
``service.domain.queue`` finds among its waiting tickets: it claims the
tickets (all still waiting, or none), creates the match, rated and charged
to nobody's address (``creator=None``), then marks the tickets matched,
which wakes their long polls. A match that cannot be made gives its
tickets back. A ticket that waited its preset's ``bot_after_s`` plays at
once against house bots (bot accounts the matchmaker makes once, named
after the bot kinds) of the closest strength.

It runs a round when a ticket arrives (a nudge, as the bot worker's
doorbell takes them) and, while tickets wait, every ``idle_s`` (waiting
widens the accepted gap; tickets expire). A round first counts every
queue's tickets in one pipelined round trip and leases only the queues
that may make a match: an idle matchmaker costs one count and one blocking
pop every ``IDLE_WAIT_S``.
"""

from __future__ import annotations

import logging
import math
import random
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from engines import GAMES
from engines.ai.policies import supported
from engines.core import Game
from service.background.scheduler import Doorbell
from service.domain import queue as matching
from service.domain.matches import Matches
from service.domain.queue import Preset, Presets
from service.domain.ratings import DEFAULT_MU
from service.store.outages import StoreBackoff, is_store_trouble
from service.store.queue import Queue

log = logging.getLogger(__name__)

Strength = Callable[[str, list[str]], dict[str, float]]
IDLE_S = 1.0  # between rounds while tickets wait
IDLE_WAIT_S = 5.0  # between rounds while none does (a nudge wakes it sooner)
EXPIRE_EVERY_S = 1.0  # a queue's idle tickets are looked for at most this often
LEASE_S = 30.0  # a queue's lease: a round takes far less; a dead worker's ends


def equal_strength(game: str, player_ids: list[str]) -> dict[str, float]:
    """Every player's strength before there are ratings: openskill's default mu."""
    return dict.fromkeys(player_ids, DEFAULT_MU)


class Matchmaker:
    def __init__(
        self,
        matches: Matches,
        queue: Queue,
        presets: Presets,
        strength: Strength = equal_strength,
        players: Any = None,
        policy: matching.Policy | None = None,
        stopping: threading.Event | None = None,
        idle_s: float = IDLE_S,
    ) -> None:
        """``players``: where house bot accounts are made (None: no database,
        so no bots fill seats)."""
        self.matches = matches
        self.queue = queue
        self.presets = presets
        self.strength = strength
        self.players = players
        self.policy = policy or matching.Policy()
        self.stopping = stopping or threading.Event()
        self.idle_s = idle_s
        self.owner = uuid.uuid4().hex
        self.rng = random.Random()
        self.doorbell = Doorbell(
            queue.take_nudge,
            queue.give_back,
            1,
            self.stopping,
            max(idle_s, IDLE_WAIT_S),
            "matchmaker",
        )
        self.busy = False  # tickets waited at the last round
        self.made = 0
        self.expired: dict[tuple[str, str], float] = {}  # when each queue's idle tickets were

    def run(self) -> None:
        log.info("matchmaker ready (%d queues)", sum(len(p) for p in self.presets.values()))
        self.doorbell.start()
        outage = StoreBackoff()
        while not self.stopping.is_set():
            try:
                self.run_once()
                outage.over()
            except Exception as error:
                if is_store_trouble(error):
                    self.stopping.wait(outage.next_wait(error))
                    continue
                log.exception("a matchmaking round failed")
            self.doorbell.wait(time.time() + (self.idle_s if self.busy else IDLE_WAIT_S))
        log.info("matchmaker stopped")

    def run_once(self, now: float | None = None) -> int:
        """One round over every queue this worker can lease: matches made."""
        made = 0
        queues = [(g, p) for g, by_name in self.presets.items() for p in by_name.values()]
        counts = self.queue.counts([(g, p.name) for g, p in queues])
        self.busy = any(waiting or claimed for waiting, claimed in counts)
        for (game_name, preset), (waiting, claimed) in zip(queues, counts, strict=True):
            if not waiting and not claimed:
                continue
            may_match = waiting >= preset.players or preset.bot_after_s is not None
            if not may_match:  # only its idle tickets may expire (atomic: no lease needed)
                self.expire(game_name, preset.name)
                continue
            if not self.queue.lease(game_name, preset.name, self.owner, LEASE_S):
                continue
            try:
                made += self.match_queue(GAMES[game_name], preset, now)
            finally:
                self.queue.release(game_name, preset.name, self.owner)
        self.made += made
        return made

    def expire(self, game: str, preset: str) -> None:
        """Expire the queue's idle tickets, at most every ``EXPIRE_EVERY_S``."""
        if time.monotonic() - self.expired.get((game, preset), -math.inf) >= EXPIRE_EVERY_S:
            self.expired[(game, preset)] = time.monotonic()
            self.queue.expire_idle(game, preset)

    def match_queue(self, game: Game, preset: Preset, now: float | None = None) -> int:
        """Make the matches one queue's tickets allow now."""
        self.expire(game.name, preset.name)
        tickets = self.queue.waiting(game.name, preset.name)
        if not tickets or (len(tickets) < preset.players and preset.bot_after_s is None):
            return 0
        now = time.time() if now is None else now
        player_ids = [t["player"] for t in tickets]
        mus = self.strength(game.name, player_ids)
        recent = self.queue.recent(game.name, player_ids)
        waiting = [
            matching.Waiting(
                t["id"],
                t["player"],
                t["joined"],
                mus.get(t["player"], DEFAULT_MU),
                frozenset(recent.get(t["player"], ())),
            )
            for t in tickets
        ]
        by_id = {t["id"]: t for t in tickets}
        made, tried = 0, set()
        for group in matching.groups(waiting, preset.players, now, self.policy):
            tried.update(w.ticket for w in group)
            made += self.make(game, preset, [by_id[w.ticket] for w in group], [])
        left = [w for w in waiting if w.ticket not in tried]
        for overdue in matching.overdue(left, now, preset.bot_after_s):
            bots = self.house_bots(game, preset.players - 1, overdue.mu)
            if bots is not None:
                made += self.make(game, preset, [by_id[overdue.ticket]], bots)
        return made

    def make(
        self, game: Game, preset: Preset, tickets: list[dict[str, Any]], bots: list[dict[str, Any]]
    ) -> int:
        """Claim ``tickets``, seat them and ``bots`` (in a random order) in a
        new rated match, and settle the tickets: 1; 0 when the tickets were
        no longer all waiting, or the match could not be made (they wait
        again)."""
        ids = [t["id"] for t in tickets]
        if not self.queue.claim(game.name, preset.name, ids):
            return 0
        seats = [
            {"player": t["seat_player"]} | ({"bot_url": t["bot_url"]} if t["bot_url"] else {})
            for t in tickets
        ] + [{"player": held(bot), "bot": bot["kind"]} for bot in bots]
        players = [s["player"]["id"] for s in seats]
        claim = matching.claim_of(now_ms(), uuid.uuid4().hex)
        if not self.take(game, players, claim):
            self.queue.unclaim(game.name, preset.name, ids)
            return 0
        order = list(range(len(seats)))
        self.rng.shuffle(order)
        try:
            created = self.matches.create(
                game,
                [seats[i] for i in order],
                dict(preset.options),
                None,
                listed=False,
                creator=None,
                rated=True,
            )
        except Exception:
            log.exception("a ranked match of %s could not be made", game.name)
            self.give_back(game, players, claim)
            self.queue.unclaim(game.name, preset.name, ids)
            return 0
        for player in players:  # before the tickets say matched: no second ticket slips in
            self.queue.swap_ranked(player, game.name, claim, created["id"])
        seat_of = {ticket_id: order.index(k) for k, ticket_id in enumerate(ids)}
        owners = {t["id"]: t["player"] for t in tickets}
        self.queue.matched(game.name, preset.name, created["id"], seat_of, owners)
        self.queue.met(game.name, players)
        return 1

    # -- one live rated match per player and game ------------------------------------
    def playing(self, game: Game, player_id: str, named: str | None = None) -> bool:
        """Whether the player plays a rated match of ``game`` now (``named``:
        what its index names, if read already)."""
        named = self.queue.ranked(player_id, game.name) if named is None else named
        return matching.still_playing(game, named, self.matches.store.load, now_ms())

    def take(self, game: Game, players: list[str], claim: str) -> bool:
        """Claim every one of ``players`` for a rated match of ``game`` about
        to be made (compare and set, one by one): none of them plays one now
        and none is claimed by another matchmaker (a house bot sought by two
        queues at once), else every claim made is given back: False."""
        taken: list[str] = []
        for player in players:
            named = self.queue.ranked(player, game.name)
            if self.playing(game, player, named) or not self.queue.swap_ranked(
                player, game.name, named, claim
            ):
                self.give_back(game, taken, claim)
                return False
            taken.append(player)
        return True

    def give_back(self, game: Game, players: list[str], claim: str) -> None:
        for player in players:
            self.queue.swap_ranked(player, game.name, claim, "")

    # -- house bots ------------------------------------------------------------------
    def house_bots(self, game: Game, needed: int, mu: float) -> list[dict[str, Any]] | None:
        """``needed`` house bot accounts of ``game``'s bot kinds, the closest
        in strength to ``mu`` (made now if there are not enough); None
        without a database."""
        if needed <= 0:
            return []
        if self.players is None:
            return None
        kinds = supported(game)
        kept = self.queue.house_bots()
        # a house bot plays one rated match of a game at a time, as a person
        # does (its rating then moves through one at a time): a kind's bots
        # all busy, one more account of that kind is made
        free = {k: b for k, b in kept.items() if not self.playing(game, b["id"])}
        per_kind = -(-needed // len(kinds))
        for kind in kinds:
            mine = [b for b in free.values() if b["kind"] == kind]
            n = len([k for k in kept if k.startswith(f"{kind}:")])
            while len(mine) < per_kind:
                n += 1
                bot = kept[f"{kind}:{n}"] = self.new_house_bot(f"{kind}:{n}", kind, n)
                free[f"{kind}:{n}"] = bot
                mine.append(bot)
        usable = {b["id"]: b for b in free.values() if b["kind"] in kinds}
        strengths = self.strength(game.name, list(usable))
        chosen = matching.house_seats(
            {i: strengths.get(i, DEFAULT_MU) for i in usable}, needed, mu
        )
        return None if chosen is None else [usable[i] for i in chosen]

    def new_house_bot(self, name: str, kind: str, n: int) -> dict[str, Any]:
        title = f"{kind.capitalize()} bot" + (f" {n}" if n > 1 else "")
        player, _ = self.players.create(title, bot=True)
        made = {
            "id": player["id"],
            "name": title,
            "bot": True,
            "holder": self.players.holder(player["id"]),
            "kind": kind,
        }
        return self.queue.keep_house_bot(name, made)


def now_ms() -> int:
    return int(time.time() * 1000)


def held(bot: dict[str, Any]) -> dict[str, Any]:
    """A house bot account as a seat's player."""
    return {k: bot[k] for k in ("id", "name", "bot", "holder")}
