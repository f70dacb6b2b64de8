"""Event streams at scale (not a test; bounded; loopback only).

Starts a private Redis and ``ludotheque serve --workers 2`` (the production
gunicorn configuration, gevent workers) with the follower caps lifted, opens
N Server-Sent Events streams spread over M Dékal matches (seats and
spectators in turn), plays every match to its end while the streams are
open, and reports:

- Redis connected clients with the streams open (and before);
- worker memory per stream (the workers' RSS growth over N);
- commit-to-delivery latency, p50/p99 over every (stream, event): from the
  moment the action that made the event was sent to the moment the stream
  delivered it (so it includes the action's own processing);
- events lost, duplicated or out of order (each open stream against the log
  as its viewer may see it): must be 0; streams that failed to open are
  counted apart, by cause;
- p50/p99 of ordinary requests (a match view, an action) made while the
  streams are open.

    python -m bench.streams --streams 10000 --matches 20
    python -m bench.streams --streams 1000 --matches 8 --json streams.json

The client is one asyncio process; it raises its own open-file limit.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import redis
import requests

from service.embedded import EmbeddedRedis, free_port

GAME = "dekal"
PLAYERS = 4
LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))


@dataclass
class Stream:
    match: int
    token: str | None
    events: list[tuple[int, int, float]] = field(default_factory=list)  # index, version, when
    opened: bool = False
    ended: bool = False
    status: int = 0
    error: str | None = None


def raise_nofile(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))


def start_server(port: int, redis_url: str, streams: int, workers: int) -> subprocess.Popen:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LUDOTHEQUE_RATE_LIMITS": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_TOKEN": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_PROCESS": "0",
        "LUDOTHEQUE_WORKER_CONNECTIONS": str(streams + 2000),
        "LUDOTHEQUE_LOG_LEVEL": "warning",
    }
    data = tempfile.mkdtemp(prefix="bench-streams-")
    command = [LUDOTHEQUE, "serve", "--port", str(port), "--data-dir", data]
    with open(Path(data) / "serve.log", "ab") as log:
        process = subprocess.Popen(
            [*command, "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    process.data_dir = data
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/v1/games", timeout=1).ok:
                return process
        except requests.RequestException:
            time.sleep(0.2)
    os.killpg(process.pid, signal.SIGTERM)
    raise RuntimeError("the server did not start")


def workers_rss(server: subprocess.Popen) -> int:
    """The RSS of the gunicorn workers (the children of the master)."""
    total = 0
    for child in psutil.Process(server.pid).children(recursive=True):
        if "gunicorn" in " ".join(child.cmdline()) and child.children() == []:
            total += child.memory_info().rss
    return total


async def follow(host: str, port: int, path: str, stream: Stream, stop: asyncio.Event) -> None:
    try:
        await follow_once(host, port, path, stream, stop)
    except (OSError, ValueError, asyncio.IncompleteReadError) as failed:
        stream.error = type(failed).__name__


async def follow_once(
    host: str, port: int, path: str, stream: Stream, stop: asyncio.Event
) -> None:
    reader, writer = await asyncio.open_connection(host, port, limit=1 << 20)
    headers = f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: text/event-stream\r\n"
    if stream.token:
        headers += f"Authorization: Bearer {stream.token}\r\n"
    writer.write((headers + "\r\n").encode())
    await writer.drain()
    status = await reader.readline()
    stream.status = int(status.split()[1])
    chunked = False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"transfer-encoding: chunked"):
            chunked = True
    stream.opened = True
    buffer = b""
    try:
        while not stop.is_set():
            if chunked:
                size_line = await reader.readline()
                if not size_line:
                    break
                size = int(size_line.strip() or b"0", 16)
                if size == 0:
                    break
                chunk = await reader.readexactly(size + 2)
                buffer += chunk[:-2]
            else:
                chunk = await reader.read(65536)
                if not chunk:
                    break
                buffer += chunk
            now = time.monotonic()
            *messages, buffer = buffer.split(b"\n\n")
            for message in messages:
                for line in message.split(b"\n"):
                    if line.startswith(b"data: "):
                        event = orjson.loads(line[6:])
                        stream.events.append((event["index"], event["version"], now))
        stream.ended = True
    finally:
        writer.close()


def play(base: str, match_id: str, tokens: list[str], seed: int, pace_s: float, log: dict) -> None:
    """Play one match to its end, recording when each version was sent."""
    http = requests.Session()
    rng = random.Random(seed)
    version = int(http.get(f"{base}/v1/games/{GAME}/matches/{match_id}").json()["version"])
    while True:
        match = http.get(
            f"{base}/v1/games/{GAME}/matches/{match_id}",
            headers={"Authorization": f"Bearer {tokens[0]}"},
        )
        log["view"].append(match.elapsed.total_seconds())
        to_act = match.json()["to_act"]
        if not to_act:
            return
        seat = rng.choice(to_act)
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        legal = http.get(f"{base}/v1/games/{GAME}/matches/{match_id}/legal-actions", headers=auth)
        action = rng.choice(legal.json()["actions"])
        sent = time.monotonic()
        answer = http.post(
            f"{base}/v1/games/{GAME}/matches/{match_id}/actions", json=action, headers=auth
        )
        log["action"].append(time.monotonic() - sent)
        if answer.status_code == 200:
            version = answer.json()["version"]
            log["sent"][(match_id, version)] = sent
        time.sleep(pace_s)


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    raise_nofile(args.streams + 1000)
    with EmbeddedRedis(Path(tempfile.mkdtemp(prefix="bench-redis-")), persist=False) as url:
        port = free_port()
        server = start_server(port, url, args.streams, args.workers)
        base = f"http://127.0.0.1:{port}"
        try:
            figures = await measure(args, url, server, base, port)
        finally:
            os.killpg(server.pid, signal.SIGINT)
            server.wait(timeout=60)
        log = (Path(server.data_dir) / "serve.log").read_text()
        shutil.rmtree(server.data_dir, ignore_errors=True)
        return figures | {
            "server_tracebacks": log.count("Traceback"),
            "worker_timeouts": log.count("WORKER TIMEOUT"),
            "server_log_tail": log.splitlines()[-5:],
        }


async def measure(
    args: argparse.Namespace, url: str, server: subprocess.Popen, base: str, port: int
) -> dict[str, Any]:
    client = redis.Redis.from_url(url)
    http = requests.Session()
    matches = []
    for _ in range(args.matches):
        created = http.post(
            f"{base}/v1/games/{GAME}/matches",
            json={"players": [{"name": f"P{i}"} for i in range(PLAYERS)]},
        ).json()
        matches.append((created["id"], [s["token"] for s in created["seats"]]))
    clients_before = client.info("clients")["connected_clients"]
    rss_before = workers_rss(server)
    streams = []
    for i in range(args.streams):
        m = i % args.matches
        seat = (i // args.matches) % (PLAYERS + 1)
        streams.append(Stream(m, matches[m][1][seat] if seat < PLAYERS else None))
    stop = asyncio.Event()
    opened_at = time.monotonic()
    tasks = []
    for i, stream in enumerate(streams):
        path = f"/v1/games/{GAME}/matches/{matches[stream.match][0]}/stream"
        tasks.append(asyncio.create_task(follow("127.0.0.1", port, path, stream, stop)))
        if i % 100 == 99:
            await asyncio.sleep(args.open_pause)
    while sum(s.opened or s.error is not None for s in streams) < len(streams):
        if time.monotonic() - opened_at > 300:
            break
        await asyncio.sleep(0.2)
    opened = sum(s.opened and s.status == 200 for s in streams)
    open_s = time.monotonic() - opened_at
    await asyncio.sleep(2)
    clients_open = client.info("clients")["connected_clients"]
    rss_open = workers_rss(server)
    log: dict[str, Any] = {"view": [], "action": [], "sent": {}}
    players = [
        asyncio.to_thread(play, base, match_id, tokens, 7 + m, args.pace, log)
        for m, (match_id, tokens) in enumerate(matches)
    ]
    await asyncio.gather(*players)
    clients_play = client.info("clients")["connected_clients"]
    deadline = time.monotonic() + 60
    while sum(s.ended for s in streams) < opened and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    expected: dict[tuple[int, str | None], list[int]] = {}
    lost = duplicated = disordered = 0
    latencies = []
    failures: dict[str, int] = {}
    for stream in streams:
        if not stream.opened or stream.status != 200:
            kind = stream.error or f"status {stream.status}"
            failures[kind] = failures.get(kind, 0) + 1
            continue
        key = (stream.match, stream.token)
        if key not in expected:
            match_id = matches[stream.match][0]
            headers = {"Authorization": f"Bearer {stream.token}"} if stream.token else {}
            body = http.get(
                f"{base}/v1/games/{GAME}/matches/{match_id}/events",
                params={"limit": 1000},
                headers=headers,
            ).json()
            expected[key] = [e["index"] for e in body["events"]]
        got = [index for index, _, _ in stream.events]
        want = expected[key]
        lost += len(set(want) - set(got))
        duplicated += len(got) - len(set(got))
        disordered += sum(1 for a, b in itertools.pairwise(got) if b <= a)
        match_id = matches[stream.match][0]
        for _, version, when in stream.events:
            sent = log["sent"].get((match_id, version))
            if sent is not None:
                latencies.append(when - sent)
    return {
        "streams": args.streams,
        "streams_open": opened,
        "streams_failed": failures,
        "matches": args.matches,
        "workers": args.workers,
        "open_s": round(open_s, 1),
        "redis_clients_before": clients_before,
        "redis_clients_streams_open": clients_open,
        "redis_clients_while_playing": clients_play,
        "worker_kb_per_stream": round((rss_open - rss_before) / 1024 / max(1, opened), 1),
        "deliveries": len(latencies),
        "delivery_p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "delivery_p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "lost": lost,
        "duplicated": duplicated,
        "out_of_order": disordered,
        "view_p50_ms": round(percentile(log["view"], 50) * 1000, 1),
        "view_p99_ms": round(percentile(log["view"], 99) * 1000, 1),
        "action_p50_ms": round(percentile(log["action"], 50) * 1000, 1),
        "action_p99_ms": round(percentile(log["action"], 99) * 1000, 1),
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between a match's turns")
    parser.add_argument(
        "--open-pause", type=float, default=0.05, help="seconds between batches of 100 opens"
    )
    parser.add_argument("--json", help="write the figures here too")
    args = parser.parse_args(argv)
    figures = asyncio.run(run(args))
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    main()
