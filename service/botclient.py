"""`ludotheque bot`: play one seat of a match through the public HTTP API only.

This is also the model for writing your own bot: wait for your turn with a
long poll on the event log, ask for your legal actions, pick one, and post
it with an ``Idempotency-Key`` so that a retry after a dropped connection
can never play twice. Every call survives a dropped connection or a
restarted server by retrying with backoff.

Policies: ``random`` needs nothing but the legal actions. ``greedy`` and
``mcts`` need a full game state to search from, which the client rebuilds
from its own view with the game's ``state_from_view`` (hidden parts
sampled), exactly as the server-side bots do with ``determinize``.

With ``rematches`` (``--rematches N``), after the end the client asks for a
rematch (``POST .../rematch``: it offers one, or accepts the one another
seat offered), then plays the new match with the seat and token the answer
gives, N times.

With a player token (``ldq_player_…``, e.g. a bot account's), the client
plays whichever seat the player holds, takes an open one first with
``--seat N``, and keeps its token through rematches.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from typing import Any

import requests

from engines import get_game
from engines.ai import choose_action

log = logging.getLogger(__name__)

RETRYABLE = {429, 500, 502, 503, 504}


class BotClient:
    def __init__(
        self,
        url: str,
        game: str,
        match_id: str,
        token: str,
        policy: str = "random",
        budget_s: float = 1.0,
        patience_s: float = 300.0,
        rematches: int = 0,
    ) -> None:
        self.url = url.rstrip("/")
        self.base = f"{self.url}/v1/games/{game}/matches/{match_id}"
        self.rematches = rematches
        self.game = get_game(game)
        self.policy = policy
        self.budget_s = budget_s
        self.patience_s = patience_s
        self.rng = random.Random()
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"
        if policy != "random" and not hasattr(self.game, "state_from_view"):
            raise ValueError(f"{game} bots can play {policy} only on the server side")

    def run_series(self) -> list[dict[str, Any]]:
        """Play the match, then ``rematches`` rematches; return each outcome."""
        outcomes = [self.run()]
        for _ in range(self.rematches):
            taken = self._call("POST", "/rematch", accept=(201,)).json()
            log.info("rematch %s: seat %s (%s)", taken["id"], taken["seat"], taken["status"])
            self.base = f"{self.url}/v1/games/{self.game.name}/matches/{taken['id']}"
            if "token" in taken:  # a seat token's new seat; a player holds its own as before
                self.http.headers["Authorization"] = f"Bearer {taken['token']}"
            outcomes.append(self.run())
        return outcomes

    def join(self, seat: int) -> None:
        """Take open ``seat`` as the player whose token this client holds
        (a bot account's, made by an app or by ``ludotheque players create --bot``)."""
        self._call("POST", f"/seats/{seat}", json={}, accept=(201,))

    def run(self) -> dict[str, Any]:
        """Play until the match is over; return its outcome."""
        after = 0
        while True:
            match = self._call("GET", "").json()
            if match["status"] == "finished":
                log.info("the match is over: %s", match["outcome"])
                return match["outcome"]
            if match["status"] == "active" and match["your_seat"] in match["to_act"]:
                self._play(match)
                continue
            # Not our turn: wait until something happens.
            page = self._call("GET", "/events", params={"after": after, "wait": 25}).json()
            after = page["next"]

    def _play(self, match: dict[str, Any]) -> None:
        legal = self._call("GET", "/legal-actions").json()
        if legal["version"] != match["version"] or not legal["actions"]:
            return
        action = self._choose(match, legal["actions"])
        seat, version = match["your_seat"], match["version"]
        answer = self._call(
            "POST",
            "/actions",
            json=action,
            headers={"If-Match": f'"{version}"', "Idempotency-Key": f"seat{seat}-v{version}"},
            accept=(200, 409, 412),
        )
        if answer.status_code != 200:
            log.info("the match moved on before our action (%s)", answer.json()["code"])

    def _choose(self, match: dict[str, Any], actions: list[dict[str, Any]]) -> dict[str, Any]:
        if self.policy == "random":
            return self.rng.choice(actions)
        seat = match["your_seat"]
        state = self.game.state_from_view(match["view"], seat, self.rng)
        return choose_action(self.game, state, seat, self.policy, self.rng, self.budget_s)

    def _call(
        self, method: str, path: str, accept: tuple[int, ...] = (200,), **kwargs: Any
    ) -> requests.Response:
        return call(self.http, method, self.base + path, self.patience_s, accept, **kwargs)


def call(
    http: requests.Session,
    method: str,
    url: str,
    patience_s: float,
    accept: tuple[int, ...] = (200,),
    **kwargs: Any,
) -> requests.Response:
    """One API call, retried with backoff through dropped connections,
    restarts and overload, for up to ``patience_s`` seconds."""
    deadline = time.monotonic() + patience_s
    delay = 0.1
    while True:
        try:
            response = http.request(method, url, timeout=40, **kwargs)
            if response.status_code in accept:
                return response
            if response.status_code not in RETRYABLE:
                response.raise_for_status()
                raise RuntimeError(f"unexpected answer {response.status_code}")
            reason = f"status {response.status_code}"
        except (requests.ConnectionError, requests.Timeout) as dropped:
            reason = type(dropped).__name__
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up on {method} {url}: {reason}")
        log.warning("%s %s failed (%s); retrying in %.1f s", method, url, reason, delay)
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


class Ladder:
    """``ludotheque bot --queue GAME``: a player (a bot account) on the
    ranked ladder, playing one ranked match after another: join the queue
    (``POST /v1/games/G/queue``), long-poll the ticket until it is matched,
    play the match with the player token, and again. ``leave`` gives the
    ticket back (Ctrl-C)."""

    def __init__(
        self,
        url: str,
        game: str,
        token: str,
        preset: str | None = None,
        policy: str = "random",
        budget_s: float = 1.0,
        patience_s: float = 300.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.game = game
        self.token = token
        self.preset = preset
        self.policy = policy
        self.budget_s = budget_s
        self.patience_s = patience_s
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"
        self.ticket: str | None = None  # while it waits in the queue

    def _call(self, method: str, path: str, accept: tuple[int, ...] = (200,), **kwargs: Any):
        return call(self.http, method, self.url + path, self.patience_s, accept, **kwargs)

    def run(self, matches: int | None = None) -> Iterator[dict[str, Any]]:
        """Play ``matches`` ranked matches (None: until stopped), each one's outcome."""
        if self.preset is None:
            listed = self._call("GET", f"/v1/games/{self.game}/queue").json()["presets"]
            self.preset = listed[0]["name"]
        played = 0
        while matches is None or played < matches:
            match_id = self.matched()
            log.info("matched in %s", match_id)
            yield BotClient(
                self.url,
                self.game,
                match_id,
                self.token,
                self.policy,
                self.budget_s,
                self.patience_s,
            ).run()
            played += 1

    def matched(self) -> str:
        """Join the queue and wait until matched: the match's id."""
        while True:
            answer = self._call(
                "POST",
                f"/v1/games/{self.game}/queue",
                json={"preset": self.preset},
                accept=(201, 409),
            )
            found = answer.json()
            if answer.status_code == 409 and found.get("code") == "in_ranked_match":
                return found["match"]  # a ranked match of ours goes on: play it first
            if answer.status_code == 409 and found.get("code") != "already_queued":
                raise RuntimeError(f"the queue refused us: {found.get('detail')}")
            self.ticket = found["ticket"] if answer.status_code == 409 else found["id"]
            while True:
                ticket = self._call(
                    "GET", f"/v1/queue/tickets/{self.ticket}", params={"wait": 25}
                ).json()
                if ticket["status"] == "matched":
                    self.ticket = None
                    return ticket["match"]["id"]
                if ticket["status"] != "waiting":
                    break  # expired or left: join again

    def leave(self) -> None:
        """Give the waiting ticket back, if any."""
        if self.ticket is not None:
            self.http.delete(f"{self.url}/v1/queue/tickets/{self.ticket}", timeout=10)
            self.ticket = None
