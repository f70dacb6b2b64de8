"""The ranked queue at scale (issue 37, point 7): players of mixed strengths
join every game's queue of every size at a steady rate; how fast matches
are made, how long tickets wait, how far apart in strength a match's
players are.

Through the real store and matchmaker against a real Redis (an embedded
one, ``REDIS_URL`` if set, or with ``--cluster`` a private Redis Cluster of
three primaries): tickets are joined with ``service.store.queue.Queue.join``
(what ``POST /v1/games/G/queue`` calls once it has checked the caller) from
``--joiners`` threads, and ``--matchmakers`` matchmakers (``ludotheque
worker``'s, each its own lease holder) make the matches with the app's own
``Matches.create``: every match is committed, rated and indexed as the
service does it. Not over HTTP: the request path's cost is bench.load's.
Each player's strength (openskill's mu) is drawn from N(25, 8)::

    python -m bench.queue --players 10000 --rate 500

It prints and writes (``bench/results/queue.json``, ``--json PATH``): matches
made per second, the median and p99 wait until matched, the strength spread
within matches (max mu - min mu), per queue size and overall. ``--base-gap``
and ``--widen`` set the matchmaker's policy (``service.domain.queue.Policy``).
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from bench import results
from bench.load import redis_server
from service.app import create_app
from service.background.matchmaker import Matchmaker
from service.domain.queue import Policy
from service.store.queue import decoded, ticket_key


@contextlib.contextmanager
def store_url(root: Path, cluster: bool) -> Iterator[str]:
    if not cluster:
        with redis_server(root / "redis") as url:
            yield url
        return
    from tests.support.clusters import Cluster

    running = Cluster(root / "cluster", primaries=3).start()
    try:
        yield running.url
    finally:
        running.close()


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def summary(waits: list[float], spreads: list[float], matches: int) -> dict[str, Any]:
    return {
        "matches": matches,
        "matched_tickets": len(waits),
        "wait_median_s": round(statistics.median(waits), 3) if waits else None,
        "wait_p99_s": round(percentile(waits, 99), 3),
        "wait_max_s": round(max(waits), 3) if waits else None,
        "spread_median": round(statistics.median(spreads), 3) if spreads else None,
        "spread_p99": round(percentile(spreads, 99), 3),
        "spread_max": round(max(spreads), 3) if spreads else None,
    }


def run(args: argparse.Namespace, url: str) -> dict[str, Any]:
    app = create_app(
        {
            "REDIS_URL": url,
            "REDIS_CLUSTER": args.cluster,
            "RATELIMIT_ENABLED": False,
            "BOT_SEATS_PER_ADDRESS": 0,
            # its players do not poll their tickets: none expires meanwhile
            "QUEUE_IDLE_S": 3600,
        }
    )
    queue = app.extensions["ludotheque.queue"]
    presets = app.extensions["ludotheque.queue_presets"]
    queues = [(game, preset) for game, by_name in presets.items() for preset in by_name.values()]
    rng = random.Random(args.seed)
    mu = {f"{n:032x}": rng.gauss(25, 8) for n in range(args.players)}

    def strength(game: str, player_ids: list[str]) -> dict[str, float]:
        return {p: mu.get(p, 25.0) for p in player_ids}

    policy = Policy(base_gap=args.base_gap, widen_per_s=args.widen)
    stopping = threading.Event()
    makers = [
        Matchmaker(
            app.extensions["ludotheque.matches"],
            queue,
            presets,
            strength,
            policy=policy,
            stopping=stopping,
            idle_s=0.2,
        )
        for _ in range(args.matchmakers)
    ]
    threads = [threading.Thread(target=m.run, daemon=True) for m in makers]
    for thread in threads:
        thread.start()

    joined: list[tuple[str, str, str, str]] = []  # game, preset, ticket, player
    lock = threading.Lock()
    players = list(mu)
    started, wall_started = time.monotonic(), time.time()

    def join(part: int) -> None:
        for n in range(part, args.players, args.joiners):
            due = started + n / args.rate
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            game, preset = queues[n % len(queues)]
            player = players[n]
            seat = {"id": player, "name": "P", "bot": False, "holder": "h" + player}
            made = queue.join(
                game, preset.name, player, {"seat_player": orjson.dumps(seat).decode()}
            )
            with lock:
                joined.append((game, preset.name, made["id"], player))

    joiners = [threading.Thread(target=join, args=(k,)) for k in range(args.joiners)]
    for thread in joiners:
        thread.start()
    for thread in joiners:
        thread.join()
    joining_s = time.monotonic() - started
    # drained: what still waits cannot make a match (fewer than a match's seats per queue)
    deadline = time.monotonic() + args.drain_s
    while time.monotonic() < deadline:
        left = {(g, p.name): queue.count(g, p.name) for g, p in queues}
        if all(left[(g, p.name)] < p.players for g, p in queues):
            break
        time.sleep(0.2)
    stopping.set()
    for thread in threads:
        thread.join(timeout=10)
    elapsed = time.monotonic() - started

    tickets = []
    for chunk in range(0, len(joined), 500):
        pipe = queue.client.pipeline(transaction=False)
        for game, preset, ticket_id, _ in joined[chunk : chunk + 500]:
            pipe.hgetall(ticket_key(game, preset, ticket_id))
        tickets.extend(decoded(found) for found in pipe.execute())
    by_match: dict[str, list[str]] = {}
    waits_by_size: dict[int, list[float]] = {}
    waits, first, last = [], None, None
    statuses: dict[str, int] = {}
    size_of = {(g, p.name): p.players for g, p in queues}
    for (game, preset, _, player), ticket in zip(joined, tickets, strict=True):
        statuses[ticket["status"]] = statuses.get(ticket["status"], 0) + 1
        if ticket["status"] != "matched":
            continue
        waited = (int(ticket["settled"]) - int(ticket["joined"])) / 1000
        waits.append(waited)
        waits_by_size.setdefault(size_of[(game, preset)], []).append(waited)
        by_match.setdefault(ticket["match"], []).append(player)
        settled = int(ticket["settled"]) / 1000
        first = settled if first is None else min(first, settled)
        last = settled if last is None else max(last, settled)
    spreads_by_size: dict[int, list[float]] = {}
    spreads = []
    for members in by_match.values():
        spread = max(mu[p] for p in members) - min(mu[p] for p in members)
        spreads.append(spread)
        spreads_by_size.setdefault(len(members), []).append(spread)
    # the rate while players join (the queue's steady state), and overall
    settled_at = sorted(int(t["settled"]) / 1000 for t in tickets if t["status"] == "matched")
    window = [s for s in settled_at if s <= wall_started + joining_s]
    in_window = len(window) and len(
        {
            t["match"]
            for t in tickets
            if t["status"] == "matched" and int(t["settled"]) / 1000 <= wall_started + joining_s
        }
    )
    return {
        "players": args.players,
        "rate_per_s": args.rate,
        "queues": len(queues),
        "cluster": args.cluster,
        "matchmakers": args.matchmakers,
        "policy": {"base_gap": args.base_gap, "widen_per_s": args.widen},
        "joining_s": round(joining_s, 2),
        "elapsed_s": round(elapsed, 2),
        "statuses": statuses,
        "matches_per_s_while_joining": round(in_window / joining_s, 1),
        "matches_per_s_overall": round(len(by_match) / ((last or 0) - wall_started or 1e-9), 1),
        "all": summary(waits, spreads, len(by_match)),
        "by_size": {
            str(size): summary(
                waits_by_size.get(size, []),
                spreads_by_size.get(size, []),
                len(spreads_by_size.get(size, [])),
            )
            for size in sorted(waits_by_size)
        },
        "made_by_each_matchmaker": [m.made for m in makers],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--rate", type=float, default=500.0, help="joins per second")
    parser.add_argument("--joiners", type=int, default=4, help="threads joining")
    parser.add_argument("--matchmakers", type=int, default=1)
    parser.add_argument("--base-gap", type=float, default=Policy().base_gap)
    parser.add_argument("--widen", type=float, default=Policy().widen_per_s)
    parser.add_argument("--drain-s", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--cluster", action="store_true", help="on a private Redis Cluster")
    parser.add_argument("--json", type=Path, default=results.default_path("queue"))
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="ludotheque-queue-") as tmp,
        store_url(Path(tmp), args.cluster) as url,
    ):
        figures = run(args, url)
    overall = figures["all"]
    print(
        f"{figures['players']} players at {figures['rate_per_s']}/s over {figures['queues']} "
        f"queues ({'cluster' if args.cluster else 'redis'}): {overall['matches']} matches, "
        f"{figures['matches_per_s_while_joining']} a second while joining; wait median "
        f"{overall['wait_median_s']} s, p99 "
        f"{overall['wait_p99_s']} s; spread median {overall['spread_median']}, p99 "
        f"{overall['spread_p99']}; {figures['statuses']}"
    )
    for size, found in figures["by_size"].items():
        print(
            f"  {size} seats: {found['matches']} matches, wait median {found['wait_median_s']} "
            f"s, p99 {found['wait_p99_s']} s, spread median {found['spread_median']}, p99 "
            f"{found['spread_p99']}"
        )
    results.write(args.json, "queue", results.command_line("queue"), figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
