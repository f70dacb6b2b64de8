"""Outbound calls benchmark: do HTTP bots and webhook receivers that drip
their answers slow anyone else's? (Not a test; loopback only, bounded in
time.)

Starts a private Redis and the app on a free loopback port in this process,
with what one ``ludotheque worker`` process runs: one bot worker and one
webhook deliverer (deployed settings). Then, in one run:

1. *before*: ``--players`` honest people each play a Dékal match against
   an honest HTTP bot (it answers the first legal action at once), with a
   webhook to an honest receiver (it answers 204 at once), for
   ``--seconds``. For each person's action it records the bot's delay (from
   the action's answer to the person's seeing the bot's move) and the
   delivery's delay (from the action's answer to the arrival of the
   action's events at the receiver);
2. *during*: the same for another ``--seconds``, while ``--bots`` HTTP bot
   seats (each in a match against a ``random`` bot, ``bot_deadline_s`` 10,
   the most allowed) and ``--receivers`` webhook receivers (each called by
   a match of its own) drip their answers: a status line and headers that
   never end, one byte every ``--gap-ms``. The dripping servers run in a
   process of their own (``tests.support.receivers.DripperFarm``), as they
   would on someone else's machine.

It prints, for each phase, the count, p50, p99 and max of both delays, and
the ratio of the p99s (the target: within 2x), and writes them to
``bench/results/outbound.json`` (``bench.results``)::

    python -m bench.outbound                       # 18 bots, 16 receivers, 60 s each
    python -m bench.outbound --seconds 30 --json out.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import requests
from werkzeug.serving import make_server

from bench import results

GAME = "dekal"
GRACE_S = 15  # how long after a phase a bot's owed move is still waited for


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        pass

    def answer(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


def summary(values: list[float]) -> dict[str, float]:
    if len(values) < 2:
        return {"count": len(values), "p50": 0.0, "p99": 0.0, "max": 0.0}
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {
        "count": len(values),
        "p50": round(cuts[49] * 1000, 1),
        "p99": round(cuts[98] * 1000, 1),
        "max": round(max(values) * 1000, 1),
    }


class Honest:
    """People against honest HTTP bots, with webhooks to an honest receiver."""

    def __init__(self, base: str, bot_url: str, hook_url: str, arrived: dict) -> None:
        self.base = base
        self.bot_url = bot_url
        self.hook_url = hook_url
        self.arrived = arrived  # (match, version) -> first arrival at the receiver
        self.bot_delays: list[float] = []
        self.censored = 0
        self.acted: list[tuple[str, int, float]] = []  # (match, version, answered at)
        self.lock = threading.Lock()

    def play(self, until: float) -> None:
        """Play matches until ``until``; a bot's delay runs from the action's
        answer (or from first seeing the bot owe a move) to seeing it made.
        A move still owed ``GRACE_S`` after the end counts with the time it
        waited (``censored``)."""
        http = requests.Session()
        while time.monotonic() < until:
            body = {
                "players": [{"name": "A"}, {"bot_url": self.bot_url}],
                "webhook": {"url": self.hook_url},
            }
            created = http.post(f"{self.base}/{GAME}/matches", json=body, timeout=30).json()
            url = f"{self.base}/{GAME}/matches/{created['id']}"
            auth = {"Authorization": f"Bearer {created['seats'][0]['token']}"}
            match = http.get(url, timeout=30).json()
            owed_since: float | None = None
            while match["status"] == "active":
                now = time.monotonic()
                if match["to_act"] != [0]:
                    owed_since = owed_since or now
                    if now > until + GRACE_S:
                        with self.lock:
                            self.bot_delays.append(now - owed_since)
                            self.censored += 1
                        return
                    time.sleep(0.005)
                    match = http.get(url, timeout=30).json()
                    continue
                if owed_since is not None:
                    with self.lock:
                        self.bot_delays.append(now - owed_since)
                    owed_since = None
                if now >= until:
                    return
                legal = http.get(f"{url}/legal-actions", headers=auth, timeout=30).json()
                answer = http.post(
                    f"{url}/actions", json=legal["actions"][0], headers=auth, timeout=30
                )
                if answer.status_code == 200:
                    owed_since = time.monotonic()
                    match = answer.json()
                    with self.lock:
                        self.acted.append((created["id"], match["version"], owed_since))
                else:
                    match = http.get(url, timeout=30).json()

    def measure(self, seconds: float, players: int) -> dict[str, Any]:
        self.bot_delays, self.acted, self.censored = [], [], 0
        until = time.monotonic() + seconds
        threads = [threading.Thread(target=self.play, args=(until,)) for _ in range(players)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        time.sleep(6)  # the last deliveries
        deliveries = [self.arrived[(m, v)] - t for m, v, t in self.acted if (m, v) in self.arrived]
        return {
            "bot_moves_ms": summary(self.bot_delays) | {"censored": self.censored},
            "deliveries_ms": summary(deliveries),
            "undelivered": sum((m, v) not in self.arrived for m, v, _ in self.acted),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="each phase's length")
    parser.add_argument("--players", type=int, default=2, help="honest people at once")
    parser.add_argument("--bots", type=int, default=18, help="dripping HTTP bot seats")
    parser.add_argument("--receivers", type=int, default=16, help="dripping webhook receivers")
    parser.add_argument("--gap-ms", type=float, default=200, help="between two dripped bytes")
    parser.add_argument("--json", type=Path, help="write the figures there too")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    os.environ["LUDOTHEQUE_OUTBOUND_ALLOW"] = "http,127.0.0.0/8"
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    from service.app import create_app
    from service.background.webhooks import Deliverer
    from service.background.worker import Worker
    from service.cli import delivery_settings
    from service.settings import load
    from service.store.embedded import EmbeddedRedis
    from tests.support.receivers import DripperFarm

    arrived: dict[tuple[str, int], float] = {}

    class Receiver(Quiet):
        def do_POST(self) -> None:
            body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
            now = time.monotonic()
            for event in body["events"]:
                arrived.setdefault((body["match_id"], event["version"]), now)
            self.answer(204)

    class Bot(Quiet):
        def do_POST(self) -> None:
            turn = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self.answer(200, orjson.dumps({"action": turn["legal_actions"][0]}))

    figures: dict[str, Any] = {"settings": vars(args) | {"json": None}}
    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(folder, persist=False) as url:
        # the quotas are not what is measured
        quotas_off = {"RATELIMIT_ENABLED": False, "BOT_SEATS_PER_ADDRESS": 0}
        app = create_app({"REDIS_URL": url, **quotas_off})
        api = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=api.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{api.server_port}/v1/games"
        receiver, receiver_url = serve(Receiver)
        bot, bot_url = serve(Bot)
        matches = app.extensions["ludotheque.matches"]
        stopping = threading.Event()
        worker = Worker(app.extensions["ludotheque.turns"], budget_s=0.01, stopping=stopping)
        deliverer = Deliverer(matches, delivery_settings(load()))
        threads = [
            threading.Thread(target=worker.run),
            threading.Thread(target=deliverer.run, args=(stopping,)),
        ]
        for thread in threads:
            thread.start()
        honest = Honest(base, bot_url, receiver_url, arrived)
        farm = DripperFarm(args.bots + args.receivers, args.gap_ms / 1000, 2 * args.seconds)
        try:
            figures["before"] = honest.measure(args.seconds, args.players)
            http = requests.Session()
            for drip in farm.urls[: args.bots]:
                body = {"players": [{"bot_url": drip}, {"bot": "random"}], "bot_deadline_s": 10}
                http.post(f"{base}/{GAME}/matches", json=body).raise_for_status()
            for drip in farm.urls[args.bots :]:
                body = {"players": [{"name": "x"}, {"name": "y"}], "webhook": {"url": drip}}
                http.post(f"{base}/{GAME}/matches", json=body).raise_for_status()
            figures["during"] = honest.measure(args.seconds, args.players)
            figures["during"]["dripping_calls"] = sum(farm.calls)
            held = sorted(farm.held)
            figures["during"]["longest_dripping_call_s"] = round(held[-1], 2) if held else None
        finally:
            stopping.set()
            farm.stop()
            for thread in threads:
                thread.join(timeout=30)
            receiver.shutdown()
            bot.shutdown()
            api.shutdown()
    for kind in ("bot_moves_ms", "deliveries_ms"):
        before, during = figures["before"][kind]["p99"], figures["during"][kind]["p99"]
        figures[f"{kind}_p99_ratio"] = round(during / before, 2) if before else None
    for phase in ("before", "during"):
        print(phase, json.dumps(figures[phase]))
    print(
        f"p99 ratio during/before: bot moves {figures['bot_moves_ms_p99_ratio']}, "
        f"deliveries {figures['deliveries_ms_p99_ratio']}"
    )
    if args.json:
        print(f"wrote {results.write(args.json, 'outbound', argv, figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("outbound")))
