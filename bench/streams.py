"""Event streams at scale (not a test; bounded; loopback only).

Starts a private Redis and ``ludotheque serve --workers 2`` (the production
gunicorn configuration, gevent workers) with the follower caps lifted, opens
N Server-Sent Events streams spread over M Dékal matches (seats and
spectators in turn), plays every match to its end while the streams are
open (each match acts, then waits ``--pace`` seconds; a turn is the README's
loop, the seat's view with its legal actions then the action, on a
connection kept while the server keeps it), and reports:

- Redis connected clients with the streams open (and before);
- worker memory per stream (the workers' RSS growth over N);
- commit-to-delivery latency, p50/p99 over every (stream, event): from the
  moment the action that made the event was sent to the moment its bytes
  reached the stream's reader (so it includes the action's own processing);
- events lost, duplicated or out of order (each open stream against the log
  as its viewer may see it, read after the run): must be 0; streams that
  failed to open are counted apart, by cause;
- p50/p99 of ordinary requests (a seat's view with its legal actions, an
  action) made while the streams are open, the views on a fresh connection
  and on a kept one apart, and any answer other than 200 (counted; the turn
  is tried again);
- each worker's connections and CPU (the streams spread as the workers win
  the race to accept them);
- the CPU each part used while the matches were played, and the load average.

    # issue 17's scenario, the README's figures: 10,000 streams, 20 per
    # match, a turn every 1-3 s per match (a person's pace)
    python -m bench.streams --streams 10000 --matches 500 --pace 2 --open-pause 1
    # stress: 500 streams per match, a turn every 0.1 s
    python -m bench.streams --streams 10000 --matches 20 --pace 0.1 --open-pause 0.2
    # quick (the defaults: 1,000 streams over 8 matches, as fast as they go)
    python -m bench.streams --json streams.json

From the command line the figures go to ``bench/results/streams.json``
(``bench.results``) unless ``--json`` names another file.

The load generator is cheap so that it measures the server rather than
itself: the streams are read by ``--readers`` processes of their own, each
an asyncio loop of plain protocols that decode the chunked body and take
only each event's ``id`` line (on a one-match stream, the event's index;
versions come from the log afterwards), stamped once per read from the
socket; the matches are played from processes of their own (100 matches
each, on one asyncio loop, with a plain HTTP/1.1 client: the requests
library and a thread per match cost 1.2 ms of CPU per request, a third of
the two cores), so that what the readers do never delays, nor is counted
in, a view's or an action's time. Each process raises its own open-file
limit.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import json
import multiprocessing
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from array import array
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import redis
import requests

from bench import results
from service.store.embedded import EmbeddedRedis, free_port

GAME = "dekal"
PLAYERS = 4
LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))
EVENT_ID = re.compile(rb"^id: (\d+)$", re.MULTILINE)
SPAWN = multiprocessing.get_context("spawn")
# gunicorn's keepalive (LUDOTHEQUE_KEEPALIVE_S, its default): a connection
# idle this long is closed by the server; a client pausing longer opens a
# fresh one.
SERVER_KEEPALIVE_S = 5
# what the players log: latencies (views, and apart on a fresh or a kept
# connection; actions) and the answers other than 200
LOGGED = ("view", "view_fresh", "view_kept", "action", "errors")


@dataclass
class Stream:
    match: int
    token: str | None
    ids: array = field(default_factory=lambda: array("q"))  # the ids received, in order
    # (how many ids had arrived, when): one stamp per read that brought some
    stamps: list[tuple[int, float]] = field(default_factory=list)
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
        # a stream outlives the run (by default it ends after 10 minutes and
        # the client resumes, which this load generator does not do)
        "LUDOTHEQUE_STREAM_MAX_S": "3600",
        "LUDOTHEQUE_WORKER_CONNECTIONS": str(streams + 2000),
        "LUDOTHEQUE_LOG_LEVEL": "warning",
        "LUDOTHEQUE_KEEPALIVE_S": str(SERVER_KEEPALIVE_S),
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


def workers_of(server: subprocess.Popen) -> list[psutil.Process]:
    """The gunicorn workers (the children of the master)."""
    return [
        child
        for child in psutil.Process(server.pid).children(recursive=True)
        if "gunicorn" in " ".join(child.cmdline()) and child.children() == []
    ]


def redis_process(client: redis.Redis) -> psutil.Process:
    return psutil.Process(int(client.info("server")["process_id"]))


# -- the readers ----------------------------------------------------------------


class EventStream(asyncio.Protocol):
    """One stream: sends the request, decodes the chunked body, and keeps
    the ``id`` of each event with the time its bytes arrived."""

    def __init__(self, stream: Stream, request: bytes, done: asyncio.Future) -> None:
        self.stream = stream
        self.request = request
        self.done = done
        self.head = b""
        self.chunked: bool | None = None  # None: the head is not read yet
        self.body = bytearray()  # the chunked body not decoded yet
        self.events = b""  # decoded text not yet up to a blank line

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.write(self.request)  # type: ignore[attr-defined]

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        if self.chunked is None:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            head, data = self.head[:end].lower(), self.head[end + 4 :]
            self.stream.status = int(head.split(None, 2)[1])
            self.chunked = b"transfer-encoding: chunked" in head
            self.stream.opened = True
        if not self.chunked:
            self.take(data, now)
            return
        body = self.body
        body += data
        at = 0
        while True:
            line = body.find(b"\r\n", at)
            if line < 0:
                break
            size = int(body[at:line], 16)
            if size == 0:
                self.stream.ended = True
                break
            if len(body) < line + 2 + size + 2:
                break
            self.take(bytes(body[line + 2 : line + 2 + size]), now)
            at = line + 2 + size + 2
        del body[:at]

    def take(self, text: bytes, now: float) -> None:
        text = self.events + text
        cut = text.rfind(b"\n\n") + 2
        if cut < 2:  # no whole event yet
            self.events = text
            return
        self.events = text[cut:]
        ids = EVENT_ID.findall(text, 0, cut)
        if ids:
            self.stream.ids.extend(map(int, ids))
            self.stream.stamps.append((len(self.stream.ids), now))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.stream.ended and self.stream.error is None and exc is not None:
            self.stream.error = type(exc).__name__
        if not self.done.done():
            self.done.set_result(None)


async def open_streams(
    port: int, paths: list[tuple[str, str | None]], streams: list[Stream], pause: float
) -> list[asyncio.BaseTransport]:
    loop = asyncio.get_running_loop()
    transports, ends = [], []

    async def one(path: str, token: str | None, stream: Stream) -> None:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        if token:
            request += f"Authorization: Bearer {token}\r\n"
        done = loop.create_future()
        ends.append(done)
        try:
            transport, _ = await loop.create_connection(
                lambda: EventStream(stream, (request + "\r\n").encode(), done), "127.0.0.1", port
            )
            transports.append(transport)
        except OSError as failed:
            stream.error = type(failed).__name__

    opening = []
    for i, ((path, token), stream) in enumerate(zip(paths, streams, strict=True)):
        opening.append(asyncio.create_task(one(path, token, stream)))
        if i % 100 == 99:
            await asyncio.sleep(pause)
    await asyncio.gather(*opening)
    return transports


def reader(
    port: int, paths: list[tuple[str, str | None]], pause: float, pipe: Any
) -> None:  # in a process of its own
    raise_nofile(len(paths) + 1000)
    streams = [Stream(-1, token) for _, token in paths]
    loop = asyncio.new_event_loop()
    transports = loop.run_until_complete(open_streams(port, paths, streams, pause))

    async def opened() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not all(s.opened or s.error for s in streams):
            await asyncio.sleep(0.1)

    loop.run_until_complete(opened())
    pipe.send([(s.opened, s.status, s.error) for s in streams])

    async def until_told() -> None:  # read until the player says the matches are over
        told = asyncio.Event()
        loop.add_reader(pipe.fileno(), told.set)
        await told.wait()
        loop.remove_reader(pipe.fileno())
        deadline = time.monotonic() + pipe.recv()
        while time.monotonic() < deadline and not all(
            s.ended or s.error or not s.opened for s in streams
        ):
            await asyncio.sleep(0.1)

    loop.run_until_complete(until_told())
    for transport in transports:
        transport.close()
    loop.close()
    pipe.send([(s.ended, s.error, s.ids, s.stamps) for s in streams])
    pipe.close()


# -- the players ------------------------------------------------------------------


class Connection:
    """One player's HTTP/1.1 connection, kept between requests as a browser
    keeps it; a fresh one when the server has closed it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.fresh = False

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def request(
        self, method: str, path: str, token: str, body: Any = None
    ) -> tuple[int, Any]:
        """The answer's status and JSON body (it must have a Content-Length);
        ``fresh`` tells afterwards whether it took a new connection."""
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        payload = b""
        if body is not None:
            payload = json.dumps(body).encode()
            head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
        message = (head + "\r\n").encode() + payload
        while True:
            fresh = self.fresh = self.writer is None
            if fresh:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None and self.writer is not None
            try:
                self.writer.write(message)
                answer = await self.reader.readuntil(b"\r\n\r\n")
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if fresh:
                    raise
                continue  # the server closed the kept connection first: once more, on a fresh one
            lines = answer.decode("latin-1").lower().split("\r\n")
            headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
            data = await self.reader.readexactly(int(headers["content-length"]))
            if headers.get("connection") == "close":
                self.close()
            return int(lines[0].split()[1]), json.loads(data)


async def play(
    port: int, match_id: str, tokens: list[str], seed: int, pace_s: float, log: dict
) -> None:
    """Play one match to its end with the README's loop (a turn in one read
    and one write: the seat's view carries its legal actions), recording
    when each version was sent."""
    http = Connection(port)
    rng = random.Random(seed)
    path = f"/v1/games/{GAME}/matches/{match_id}"
    seat = 0
    while True:
        asked = time.monotonic()
        status, view = await http.request("GET", f"{path}?legal_actions=true", tokens[seat])
        log["view"].append(time.monotonic() - asked)
        log["view_fresh" if http.fresh else "view_kept"].append(log["view"][-1])
        if status != 200:  # counted, and the turn tried again
            log["errors"].append(f"view {status} {view.get('code')}")
            await asyncio.sleep(0.5)
            continue
        if not view["to_act"]:
            http.close()
            return
        if seat not in view["to_act"]:  # only before the first action
            seat = rng.choice(view["to_act"])
            continue
        sent = time.monotonic()
        status, answer = await http.request(
            "POST", f"{path}/actions", tokens[seat], rng.choice(view["legal_actions"])
        )
        log["action"].append(time.monotonic() - sent)
        if status != 200:
            log["errors"].append(f"action {status} {answer.get('code')}")
        else:
            log["sent"][(match_id, answer["version"])] = sent
            seat = rng.choice(answer["to_act"] or [seat])
        if pace_s >= 1:
            pause = pace_s * rng.uniform(0.5, 1.5)
            if pause > SERVER_KEEPALIVE_S * 0.75:
                http.close()  # the server will have closed it: a fresh one, as a browser would
            await asyncio.sleep(pause)
        else:
            await asyncio.sleep(pace_s)


def play_all(port: int, matches: list[tuple[str, list[str]]], pace_s: float, seed: int) -> dict:
    """These matches played at once on one asyncio loop (in a process of their own)."""
    raise_nofile(len(matches) + 1000)
    log: dict[str, Any] = {key: [] for key in LOGGED} | {"sent": {}}

    async def all_of_them() -> None:
        players = []
        for m, (match_id, tokens) in enumerate(matches):
            playing = play(port, match_id, tokens, seed + m, pace_s, log)
            players.append(asyncio.create_task(playing))
            if pace_s >= 1:  # at a human pace, the matches do not all act in step
                await asyncio.sleep(pace_s / len(matches))
        await asyncio.gather(*players)

    asyncio.run(all_of_them())
    return log


# -- the run --------------------------------------------------------------------


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def arrived(stream: Stream, start: float, end: float) -> int:
    """How many events ``stream`` received between ``start`` and ``end``."""
    counts = [0, *(n for n, when in stream.stamps if when < start)]
    upto = [0, *(n for n, when in stream.stamps if when <= end)]
    return upto[-1] - counts[-1]


def cpu_seconds(processes: list[psutil.Process]) -> float:
    total = 0.0
    for process in processes:
        try:
            times = process.cpu_times()
            total += times.user + times.system
        except psutil.NoSuchProcess:
            pass
    return total


def run(args: argparse.Namespace) -> dict[str, Any]:
    raise_nofile(args.streams + 1000)
    with EmbeddedRedis(Path(tempfile.mkdtemp(prefix="bench-redis-")), persist=False) as url:
        port = free_port()
        server = start_server(port, url, args.streams, args.workers)
        base = f"http://127.0.0.1:{port}"
        try:
            figures = measure(args, url, server, base, port)
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        log = (Path(server.data_dir) / "serve.log").read_text()
        shutil.rmtree(server.data_dir, ignore_errors=True)
        return figures | {
            "server_tracebacks": log.count("Traceback"),
            "worker_timeouts": log.count("WORKER TIMEOUT"),
            "server_log_tail": log.splitlines()[-5:],
        }


def measure(
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
    workers = workers_of(server)
    rss_before = sum(w.memory_info().rss for w in workers)
    streams = []
    for i in range(args.streams):
        m = i % args.matches
        seat = (i // args.matches) % (PLAYERS + 1)
        streams.append(Stream(m, matches[m][1][seat] if seat < PLAYERS else None))
    paths = [(f"/v1/games/{GAME}/matches/{matches[s.match][0]}/stream", s.token) for s in streams]
    shares = [list(range(r, len(streams), args.readers)) for r in range(args.readers)]
    opened_at = time.monotonic()
    readers, pipes = [], []
    for share in shares:
        mine, theirs = SPAWN.Pipe()
        process = SPAWN.Process(
            target=reader, args=(port, [paths[i] for i in share], args.open_pause, theirs)
        )
        process.start()
        readers.append(process)
        pipes.append(mine)
    for share, pipe in zip(shares, pipes, strict=True):
        for i, (opened, status, error) in zip(share, pipe.recv(), strict=True):
            streams[i].opened, streams[i].status, streams[i].error = opened, status, error
    opened = sum(s.opened and s.status == 200 for s in streams)
    open_s = time.monotonic() - opened_at
    time.sleep(2)
    clients_open = client.info("clients")["connected_clients"]
    rss_open = sum(w.memory_info().rss for w in workers)
    # how the streams spread over the workers (each accepts what it wins)
    spread = [len(w.net_connections("tcp")) for w in workers]
    # the matches are played from processes of their own, 100 matches each
    slices = [matches[i : i + 100] for i in range(0, len(matches), 100)]
    with ProcessPoolExecutor(len(slices), mp_context=SPAWN) as pool:
        list(pool.map(time.sleep, [0.2] * len(slices)))  # started
        server_side = {p.pid for p in psutil.Process(server.pid).children(recursive=True)}
        server_side |= {server.pid, redis_process(client).pid}
        parts = {
            "workers": workers,
            "redis": [redis_process(client)],
            # the load generator: the processes reading the streams, and the rest
            "readers": [psutil.Process(reader.pid) for reader in readers],
            "players": [psutil.Process()]
            + [
                p
                for p in psutil.Process().children(recursive=True)
                if p.pid not in server_side | {reader.pid for reader in readers}
            ],
        }
        cpu_before = {part: cpu_seconds(ps) for part, ps in parts.items()}
        each_before = [cpu_seconds([w]) for w in workers]
        played_at = time.monotonic()
        players = [
            pool.submit(play_all, port, part, args.pace, 7 + 100 * n)
            for n, part in enumerate(slices)
        ]
        logs = [player.result() for player in players]
        play_s = time.monotonic() - played_at
        cpu = {part: cpu_seconds(ps) - cpu_before[part] for part, ps in parts.items()}
        each = [cpu_seconds([w]) - before for w, before in zip(workers, each_before, strict=True)]
    log = {key: [x for one in logs for x in one[key]] for key in LOGGED}
    log["sent"] = {k: v for one in logs for k, v in one["sent"].items()}
    load_average = os.getloadavg()
    clients_play = client.info("clients")["connected_clients"]
    rss_played = sum(w.memory_info().rss for w in workers)
    for pipe in pipes:
        pipe.send(60)  # seconds left for the streams to reach match_over
    for share, pipe in zip(shares, pipes, strict=True):
        for i, (ended, error, ids, stamps) in zip(share, pipe.recv(), strict=True):
            streams[i].ended, streams[i].ids, streams[i].stamps = ended, ids, stamps
            streams[i].error = streams[i].error or error
    for process in readers:
        process.join()
    received = sum(arrived(s, played_at, played_at + play_s) for s in streams)
    expected: dict[tuple[int, str | None], list[int]] = {}
    versions: dict[int, dict[int, int]] = {}  # per match: each event's version by index
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
            versions.setdefault(stream.match, {}).update(
                (e["index"], e["version"]) for e in body["events"]
            )
        got = stream.ids.tolist()
        want = expected[key]
        lost += len(set(want) - set(got))
        duplicated += len(got) - len(set(got))
        disordered += sum(1 for a, b in itertools.pairwise(got) if b <= a)
        match_id = matches[stream.match][0]
        version_of = versions[stream.match]
        start = 0
        for upto, when in stream.stamps:
            for index in got[start:upto]:
                sent = log["sent"].get((match_id, version_of.get(index)))
                if sent is not None:
                    latencies.append(when - sent)
            start = upto
    return {
        "streams": args.streams,
        "streams_open": opened,
        "streams_failed": failures,
        # open streams that did not reach their end (match_over) in time
        "streams_unfinished": sum(s.opened and s.status == 200 and not s.ended for s in streams),
        "matches": args.matches,
        "pace_s": args.pace,
        "workers": args.workers,
        "readers": args.readers,
        "open_s": round(open_s, 1),
        "play_s": round(play_s, 1),
        "actions": len(log["sent"]),
        "redis_clients_before": clients_before,
        "redis_clients_streams_open": clients_open,
        "redis_clients_while_playing": clients_play,
        "worker_kb_per_stream": round((rss_open - rss_before) / 1024 / max(1, opened), 1),
        # the workers' memory with the streams open, before the play and after it
        "worker_mb_open_then_played": [round(rss / 2**20) for rss in (rss_open, rss_played)],
        "deliveries": len(latencies),
        "delivery_p50_ms": round(percentile(latencies, 50) * 1000, 1),
        "delivery_p99_ms": round(percentile(latencies, 99) * 1000, 1),
        "lost": lost,
        "duplicated": duplicated,
        "out_of_order": disordered,
        "view_p50_ms": round(percentile(log["view"], 50) * 1000, 1),
        "view_p99_ms": round(percentile(log["view"], 99) * 1000, 1),
        # the views that opened a connection (the server closes an idle one
        # after its keep-alive), and those on a kept one
        "view_fresh_share": round(len(log["view_fresh"]) / max(1, len(log["view"])), 2),
        "view_fresh_p50_p99_ms": [
            round(percentile(log["view_fresh"], p) * 1000, 1) for p in (50, 99)
        ],
        "view_kept_p50_p99_ms": [
            round(percentile(log["view_kept"], p) * 1000, 1) for p in (50, 99)
        ],
        # answers other than 200 to the players' views and actions, by kind
        "request_errors": dict(collections.Counter(log["errors"])),
        "action_p50_ms": round(percentile(log["action"], 50) * 1000, 1),
        "action_p99_ms": round(percentile(log["action"], 99) * 1000, 1),
        # CPU seconds per second of play, by part (2.0 = both cores), and
        # per event delivered to a stream meanwhile: less noisy than latencies
        "cpu_while_playing": {part: round(s / play_s, 2) for part, s in cpu.items()},
        # each worker's connections with the streams open, and its CPU (one
        # worker is one thread: a core at most)
        "worker_connections_then_cpu": [spread, [round(s / play_s, 2) for s in each]],
        "cpu_us_per_delivery": {
            part: round(s / max(1, received) * 1e6, 1) for part, s in cpu.items()
        },
        "load_average_after_play": [round(x, 2) for x in load_average],
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, default=1000)
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--pace",
        type=float,
        default=0.05,
        help="seconds a match waits after each action (from 1 s on: 0.5-1.5 times that, "
        "and the matches start spread over one pace)",
    )
    parser.add_argument("--readers", type=int, default=2, help="processes reading the streams")
    parser.add_argument(
        "--open-pause", type=float, default=0.05, help="seconds between a reader's 100 opens"
    )
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    figures = run(args)
    print(json.dumps(figures, indent=2))
    if args.json:
        argv = sys.argv[1:] if argv is None else argv
        print(f"wrote {results.write(args.json, 'streams', argv, figures)}")
    return figures


if __name__ == "__main__":
    main(results.command_line("streams"))
