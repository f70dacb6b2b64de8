"""Webhook benchmark: does a receiver that hangs slow anyone else's
deliveries? (Not a test; loopback only, bounded in time.)

Starts a private Redis and the app on a free loopback port in this process,
with one webhook deliverer (``--threads`` delivery threads, as one worker
process runs) and one bot worker, and two receivers on loopback:

1. the *healthy* one answers 204 at once. ``--players`` Dékal matches of two
   people (played by this script, a random legal action whenever a seat is
   to act) send it their events; the latency of an action is from the
   moment its POST was answered to the moment its events reached the
   receiver;
2. the *hanging* one never answers within the delivery timeout (5 s).
   ``--hanging`` Dékal matches of two ``random`` bots send it their events,
   so that each of their deliveries times out and is retried with backoff.

It prints the count, p50, p99 and max of the healthy latencies, and writes
them to ``bench/results/webhooks.json`` (``bench.results``)::

    python -m bench.webhooks --seconds 20                 # 20 hanging receivers' matches
    python -m bench.webhooks --seconds 20 --hanging 0 --json bench/results/webhooks-alone.json
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import orjson
import requests
from werkzeug.serving import make_server

from bench import results

GAME = "dekal"


def serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=4, help="healthy matches")
    parser.add_argument("--hanging", type=int, default=20, help="matches whose receiver hangs")
    parser.add_argument(
        "--threads", type=int, default=None, help="first-lane threads (default: as deployed)"
    )
    parser.add_argument("--seconds", type=float, default=40)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    os.environ["LUDOTHEQUE_OUTBOUND_ALLOW"] = "http,127.0.0.0/8"
    os.environ["LUDOTHEQUE_BOT_SEATS_PER_ADDRESS"] = "0"  # the quota is not what is measured
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    from service.app import create_app
    from service.background.webhooks import Deliverer, DeliverySettings
    from service.background.worker import Worker
    from service.store.embedded import EmbeddedRedis

    arrived: dict[tuple[str, int], float] = {}  # (match, version) -> first arrival

    class Healthy(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
            now = time.monotonic()
            for event in body["events"]:
                arrived.setdefault((body["match_id"], event["version"]), now)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    class Hanging(Healthy):
        def do_POST(self) -> None:
            time.sleep(6)

    with tempfile.TemporaryDirectory() as folder, EmbeddedRedis(folder, persist=False) as url:
        app = create_app({"REDIS_URL": url, "RATELIMIT_ENABLED": False})
        api = make_server("127.0.0.1", 0, app, threaded=True)
        threading.Thread(target=api.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{api.server_port}/v1/games/{GAME}/matches"
        healthy, healthy_url = serve(Healthy)
        hanging, hanging_url = serve(Hanging)
        http = requests.Session()
        for _ in range(args.hanging):
            body = {"players": [{"bot": "random"}] * 2, "webhook": {"url": hanging_url}}
            http.post(base, json=body).raise_for_status()
        matches = app.extensions["ludotheque.matches"]
        stopping = threading.Event()
        settings = DeliverySettings()
        if args.threads is not None:
            settings = DeliverySettings(threads=args.threads)
        threading.Thread(target=Deliverer(matches, settings).run, args=(stopping,)).start()
        turns = app.extensions["ludotheque.turns"]
        worker = Worker(turns, budget_s=0.01, idle_s=0.01, stopping=stopping)
        threading.Thread(target=worker.run).start()
        played: list[tuple[str, int, float]] = []  # (match, version, answered at)
        rng = random.Random(1)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            body = {"players": [{"name": "A"}, {"name": "B"}], "webhook": {"url": healthy_url}}
            made = [http.post(base, json=body).json() for _ in range(args.players)]
            live = {m["id"]: [s["token"] for s in m["seats"]] for m in made}
            while live and time.monotonic() < end:
                for match_id, tokens in list(live.items()):
                    match = http.get(f"{base}/{match_id}").json()
                    if match["status"] == "finished":
                        del live[match_id]
                        continue
                    seat = match["to_act"][0]
                    auth = {"Authorization": f"Bearer {tokens[seat]}"}
                    legal = http.get(f"{base}/{match_id}/legal-actions", headers=auth).json()
                    answer = http.post(
                        f"{base}/{match_id}/actions",
                        json=rng.choice(legal["actions"]),
                        headers=auth,
                    )
                    if answer.status_code == 200:
                        played.append((match_id, answer.json()["version"], time.monotonic()))
                    time.sleep(0.02)
        time.sleep(3)  # the last deliveries
        stopping.set()
        latencies = sorted(arrived[(m, v)] - t for m, v, t in played if (m, v) in arrived)
        missing = sum((m, v) not in arrived for m, v, _ in played)
        healthy.shutdown()
        hanging.shutdown()
        api.shutdown()
    p = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [0] * 99
    figures = {
        "seconds": args.seconds,
        "players": args.players,
        "hanging": args.hanging,
        "delivery_threads": settings.threads,
        "delivered": len(latencies),
        "not_yet": missing,
        "p50_ms": round(p[49] * 1000),
        "p99_ms": round(p[98] * 1000),
        "max_ms": round(latencies[-1] * 1000) if latencies else None,
    }
    print(
        f"hanging matches {args.hanging}, delivery threads {settings.threads}: "
        f"{len(latencies)} actions delivered ({missing} not yet), latency "
        f"p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms"
    )
    if args.json:
        print(f"wrote {results.write(args.json, 'webhooks', argv, figures)}")


if __name__ == "__main__":
    main(results.command_line("webhooks"))
