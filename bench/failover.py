"""Failover under load: are confirmed actions kept when Redis primaries die?

Starts a Redis Cluster of 3 primaries with a replica each (``--topology
cluster``), or a primary with 2 replicas under 3 Sentinels (``--topology
sentinel``), serves the API on it (in process, werkzeug threads), and lets
``--clients`` clients play two-player Dékal matches, one match at a time each,
retrying every request answered 503 (or cut) with the same
``Idempotency-Key`` until it gets an answer. Meanwhile a primary is killed
with SIGKILL ``--kills`` times: each time the replicas take over, the dead
node comes back as a replica, and every action confirmed before the kill is
looked for in its match's log. At the end every match's log is compared with
what its client was told:

- confirmed: actions answered 200;
- lost: confirmed actions missing from the log (must be 0 with
  ``--min-replicas 1``);
- unconfirmed in the log: logged actions no client was told of (an action
  applied twice would show here);
- not replayable: matches whose stored state is not the replay of their log;
- longest 503: the longest time one request kept being answered 503 (or
  cut) before it got an answer; and each failover's time to heal.

The test ``tests/reliability/test_failover.py`` runs it small; at a bigger scale (the
figures go to ``bench/results/failover.json``, ``bench.results``)::

    python -m bench.failover --kills 5 --clients 16 --seconds-between 5 --min-replicas 1
    python -m bench.failover --kills 5 --clients 16 --seconds-between 5 --min-replicas 0
    python -m bench.failover --topology sentinel --kills 5 --min-replicas 1
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
import requests
from redis.cluster import RedisCluster

from bench import results
from engines import GAMES
from service.domain.matches import engine_options
from service.store.matches import log_key, match_key
from tests.support.client import ApiClient
from tests.support.clusters import Cluster
from tests.support.sentinels import SentinelGroup
from tests.support.servers import LiveServer

GAME = "dekal"


@dataclass
class Report:
    topology: str
    min_replicas: int
    kills: int = 0
    matches: int = 0
    confirmed: int = 0
    lost: int = 0
    lost_at_failovers: list[int] = field(default_factory=list)
    unconfirmed_logged: int = 0
    not_replayable: int = 0
    longest_503_s: float = 0.0
    promoted_s: list[float] = field(default_factory=list)
    heal_s: list[float] = field(default_factory=list)
    answers_503: int = 0
    refusals: int = 0

    def lines(self) -> list[str]:
        return [
            f"topology {self.topology}, LUDOTHEQUE_REDIS_MIN_REPLICAS={self.min_replicas}",
            f"primaries killed (SIGKILL): {self.kills}, matches: {self.matches}",
            f"actions confirmed: {self.confirmed}",
            f"confirmed actions lost: {self.lost} (found after each failover: "
            f"{self.lost_at_failovers})",
            f"logged actions no client was told of: {self.unconfirmed_logged}",
            f"matches whose state is not the replay of their log: {self.not_replayable}",
            f"503 answers: {self.answers_503}, longest 503 run: {self.longest_503_s:.2f} s",
            f"4xx refusals after a retry: {self.refusals}",
            "kill to a replica promoted (s): " + ", ".join(f"{s:.1f}" for s in self.promoted_s),
            "kill to healthy again, the dead node back as a replica (s): "
            + ", ".join(f"{s:.1f}" for s in self.heal_s),
        ]


@dataclass
class Played:
    """What one client was told about one match: (version, seat, action) confirmed."""

    match_id: str
    confirmed: list[tuple[int, int, Any]] = field(default_factory=list)
    confirmed_at: list[float] = field(default_factory=list)


class Player(threading.Thread):
    def __init__(self, base: str, seed: int, stopping: threading.Event) -> None:
        super().__init__(daemon=True)
        self.api = ApiClient(base, requests.Session())
        self.rng = random.Random(seed)
        self.stopping = stopping
        self.played: list[Played] = []
        self.longest_503_s = 0.0
        self.answers_503 = 0
        self.refusals = 0

    def call(self, request, *args: Any, **headers: str) -> requests.Response | None:
        """``request(*args, **headers)`` until it is answered other than 503
        (None: the run is over)."""
        first_failure = None
        while True:
            try:
                answer = request(*args, **headers)
            except requests.RequestException:
                answer = None
            if answer is not None and answer.status_code != 503:
                if first_failure is not None:
                    self.longest_503_s = max(self.longest_503_s, time.monotonic() - first_failure)
                return answer
            if answer is not None:
                self.answers_503 += 1
            if first_failure is None:
                first_failure = time.monotonic()
            if self.stopping.is_set() and time.monotonic() - first_failure > 30:
                return None
            time.sleep(0.05 + self.rng.random() * 0.1)

    def run(self) -> None:
        while not self.stopping.is_set():
            created = self.call(self.api.create, GAME, {"players": [{"name": "A"}, {"name": "B"}]})
            if created is None:
                return
            match_id = created.json()["id"]
            tokens = [seat["token"] for seat in created.json()["seats"]]
            played = Played(match_id)
            self.played.append(played)
            if not self.play(played, tokens):
                return

    def play(self, played: Played, tokens: list[str]) -> bool:
        """Until the match is over (True) or the run is (False)."""
        match_id = played.match_id
        while not self.stopping.is_set():
            match = self.call(self.api.get, GAME, match_id)
            if match is None:
                return False
            if match.json()["status"] == "finished":
                return True
            seat = self.rng.choice(match.json()["to_act"])
            legal = self.call(self.api.legal, GAME, match_id, tokens[seat])
            if legal is None:
                return False
            actions = legal.json()["actions"]
            if not actions:
                continue
            action = self.rng.choice(actions)
            key = uuid.uuid4().hex
            answer = self.call(
                self.api.act, GAME, match_id, tokens[seat], action, Idempotency_Key=key
            )
            if answer is None:
                # Asked to stop mid-retry: the outcome is unknown, not confirmed.
                return False
            if answer.status_code == 200:
                played.confirmed.append((answer.json()["version"], seat, action))
                played.confirmed_at.append(time.monotonic())
            else:
                self.refusals += 1  # the match moved under it (a lost write): read again
        return False


def logged_actions(client: Any, match_id: str) -> list[tuple[int, int, Any]]:
    entries = client.xrange(log_key(match_id), "-", "+")
    events = [orjson.loads(fields[b"e"]) for _, fields in entries]
    return [(e["version"], e["seat"], e["action"]) for e in events if e["type"] == "action"]


def replays(client: Any, match_id: str) -> bool:
    data = client.hget(match_key(match_id), "d")
    if data is None:
        return False
    match = orjson.loads(data)
    game = GAMES[match["game"]]
    state = game.setup(engine_options(match["options"]), len(match["seats"]), match["seed"])
    for _, fields in client.xrange(log_key(match_id), "-", "+"):
        event = orjson.loads(fields[b"e"])
        if event["type"] == "action":
            game.apply(state, event["seat"], event["action"])
    return state == match["state"]


def count_lost(client: Any, players: list[Player], before: float) -> int:
    """Confirmed actions (answered before ``before``) missing from their log."""
    lost = 0
    for player in players:
        for played in list(player.played):
            pairs = zip(played.confirmed, played.confirmed_at, strict=True)
            confirmed = [action for action, at in pairs if at < before]
            if confirmed:
                logged = set(map(orjson.dumps, logged_actions(client, played.match_id)))
                lost += sum(orjson.dumps(c) not in logged for c in confirmed)
    return lost


class ClusterTopology:
    name = "cluster"

    def __init__(self, root: Path, replicas: int = 1) -> None:
        self.replicas = replicas
        self.cluster = Cluster(root, primaries=3, replicas=replicas).start()
        self.url, self.config = self.cluster.url, {"REDIS_CLUSTER": True}

    def reader(self) -> Any:
        return RedisCluster.from_url(self.url)

    def kill_a_primary(self) -> tuple[float, float]:
        """SIGKILL a primary, wait for its replica to take over and for the
        dead node to come back as a replica; the seconds until its replica
        was promoted, and until all was healthy again."""
        victim = random.choice(self.cluster.masters_with_slots())
        killed = time.monotonic()
        self.cluster.kill(victim, signal.SIGKILL)
        self.cluster.wait_replaced(victim)
        promoted = time.monotonic() - killed
        self.cluster.wait_healthy()
        self.cluster.start_node(victim)
        self.cluster.wait_healthy()
        return promoted, time.monotonic() - killed

    def close(self) -> None:
        self.cluster.close()


class SentinelTopology:
    name = "sentinel"

    def __init__(self, root: Path, replicas: int = 2) -> None:
        self.replicas = replicas
        self.group = SentinelGroup(root, replicas=replicas).start()
        self.url, self.config = self.group.url, {}

    def reader(self) -> Any:
        return redis.Redis(port=self.group.primary())

    def kill_a_primary(self) -> tuple[float, float]:
        victim = self.group.primary()
        killed = time.monotonic()
        self.group.signal(victim, signal.SIGKILL)
        deadline = killed + 120
        while self.group.primary() == victim:
            assert time.monotonic() < deadline, "the Sentinels did not fail over"
            time.sleep(0.1)
        promoted = time.monotonic() - killed
        self.group.restart(victim)
        self.group.wait_healthy()
        return promoted, time.monotonic() - killed

    def close(self) -> None:
        self.group.close()


def run(
    root: Path,
    topology: str = "cluster",
    clients: int = 8,
    kills: int = 3,
    seconds_between: float = 3.0,
    min_replicas: int = 1,
    replicas_timeout_ms: int = 1000,
    replicas: int | None = None,
) -> Report:
    """``replicas``: per primary (default: 1 on a cluster, 2 under Sentinel)."""
    if topology == "cluster":
        setup: ClusterTopology | SentinelTopology = ClusterTopology(root, replicas or 1)
    else:
        setup = SentinelTopology(root, replicas or 2)
    report = Report(f"{setup.name}, {setup.replicas} replica(s) per primary", min_replicas)
    server = LiveServer(
        {
            "REDIS_URL": setup.url,
            "REDIS_MIN_REPLICAS": min_replicas,
            "REDIS_REPLICAS_TIMEOUT_MS": replicas_timeout_ms,
            **setup.config,
        }
    )
    stopping = threading.Event()
    players = [Player(server.base, seed, stopping) for seed in range(clients)]
    try:
        for player in players:
            player.start()
        for _ in range(kills):
            time.sleep(seconds_between)
            before = time.monotonic()
            promoted, healed = setup.kill_a_primary()
            report.promoted_s.append(promoted)
            report.heal_s.append(healed)
            report.kills += 1
            reader = setup.reader()
            report.lost_at_failovers.append(count_lost(reader, players, before))
            reader.close()
        time.sleep(seconds_between)
    finally:
        stopping.set()
        for player in players:
            player.join(timeout=60)
        server.stop()
    try:
        reader = setup.reader()
        for player in players:
            report.longest_503_s = max(report.longest_503_s, player.longest_503_s)
            report.answers_503 += player.answers_503
            report.refusals += player.refusals
            for played in player.played:
                report.matches += 1
                report.confirmed += len(played.confirmed)
                logged = set(map(orjson.dumps, logged_actions(reader, played.match_id)))
                told = set(map(orjson.dumps, played.confirmed))
                report.lost += len(told - logged)
                report.unconfirmed_logged += len(logged - told)
                report.not_replayable += not replays(reader, played.match_id)
        reader.close()
    finally:
        setup.close()
    return report


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topology", choices=["cluster", "sentinel"], default="cluster")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seconds-between", type=float, default=5.0)
    parser.add_argument("--min-replicas", type=int, default=1)
    parser.add_argument("--replicas-timeout-ms", type=int, default=1000)
    parser.add_argument(
        "--replicas", type=int, help="replicas per primary (default: cluster 1, sentinel 2)"
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    with tempfile.TemporaryDirectory(prefix="ludotheque-failover-") as root:
        report = run(
            Path(root),
            args.topology,
            args.clients,
            args.kills,
            args.seconds_between,
            args.min_replicas,
            args.replicas_timeout_ms,
            args.replicas,
        )
    print("\n".join(report.lines()))
    if args.json:
        print(f"wrote {results.write(args.json, 'failover', argv, report.__dict__)}")


if __name__ == "__main__":
    main(results.command_line("failover"))
