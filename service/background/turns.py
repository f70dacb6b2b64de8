"""The turns the server owes and plays itself: a bot's move, or the random
move of a seat whose turn clock ran out (when one is owed:
``service.domain.clocks``).

After each write of a match that may owe turns, the commit subscriber
``scheduling`` queues its next one (``service.background.scheduler``); a
worker (``service.background.worker``) claims it and plays it here, one
compare-and-set write like any other (``service.domain.commits``).
"""

from __future__ import annotations

import random
import time
from typing import Any

from engines import GAMES
from engines.ai import choose_action
from service.background import httpbots
from service.background.scheduler import QUEUE_KEYS, Scheduler
from service.domain.clocks import due_at, owes_turns, server_turn
from service.domain.commits import Change, Commit, Subscriber
from service.domain.hooks import HTTP_BOT
from service.domain.matches import Matches, apply_logged
from service.domain.ports import Loaded
from service.domain.problems import Problem
from service.domain.views import status_of
from service.metrics import ACTIONS, BOT_MOVE
from service.store.matches import Store


def scheduling(store: Store, scheduler: Scheduler) -> Subscriber:
    """The commit subscriber that queues the turn the server owes a match
    at its new version. With replicas required, only once they have the
    queue's entry too (a lost entry would leave a bot's turn unplayed), and
    even after a write too few replicas confirmed, which may survive."""

    def after(commit: Commit) -> None:
        if not owes_turns(commit.match):
            return

        def queue(client: Any = None) -> None:
            due = due_at(commit.game, commit.match)
            scheduler.schedule(
                commit.match, commit.version, due, commit.finished, commit.requeue, client=client
            )

        if store.min_replicas:
            store.replicate(QUEUE_KEYS[0], queue)
        else:
            queue()

    return after


class ServerTurns:
    """The turns the server owes: their queue, and playing them."""

    def __init__(self, matches: Matches, store: Store, scheduler: Scheduler) -> None:
        self.matches = matches
        self.store = store
        self.scheduler = scheduler

    def calls_out(self, loaded: Loaded | None) -> bool:
        """Whether the turn the server owes in ``loaded`` is an HTTP bot's
        (someone else's server decides it: the worker waits on the network)."""
        if loaded is None:
            return False
        due = server_turn(GAMES[loaded.match["game"]], loaded.match, time.time())
        return due is not None and due[1] == HTTP_BOT

    def play(
        self, match_id: str, budget_s: float, rng: random.Random, loaded: Loaded | None = None
    ) -> bool:
        """Play one turn the server owes in ``match_id`` (as ``loaded``, if
        given, else read now): a bot's, or the random move of a seat whose
        clock ran out. False when none was due or another write won the race
        (whoever won rescheduled the match)."""
        loaded = loaded or self.store.load(match_id)
        if loaded is None:
            self.scheduler.unschedule(match_id)
            return False
        match = loaded.match
        game = GAMES[match["game"]]
        due = server_turn(game, match, time.time())
        if due is None:
            finished = status_of(game, match) == "finished"
            self.scheduler.schedule(match, loaded.version, due_at(game, match), finished)
            return False
        seat, policy, timed_out = due
        events = [{"type": "timeout", "seat": seat}] if timed_out else []
        if policy == HTTP_BOT:
            # someone else's player: bounded by its deadline, not the match's thinking budget
            with BOT_MOVE.labels(game.name, policy).time():
                action, why = httpbots.decide(game, match, loaded.version, seat, rng, budget_s)
            events += why
        else:
            policy, budget_s = self.scheduler.bot_move(match, policy, budget_s)
            started = time.perf_counter()
            with BOT_MOVE.labels(game.name, policy).time():
                action = choose_action(game, match["state"], seat, policy, rng, budget_s)
            if not timed_out:
                self.scheduler.charge(match, time.perf_counter() - started)

        def decide(current: Loaded) -> Change:
            return Change(events + apply_logged(game, current.match, seat, action), requeue=True)

        try:
            # one try: a turn decided on a match that moved on is no longer owed
            self.matches.commits.change(
                lambda: self.matches.load(game, match_id), decide, start=loaded, attempts=1
            )
        except Problem:  # 409: another write won the race
            return False
        ACTIONS.labels(game.name, "clock" if timed_out else "bot").inc()
        return True
