"""Load benchmark: Ludothèque against its floor, over loopback HTTP (not a test).

Starts a Redis (``$REDIS_URL`` if it is a loopback one, else a private
server), ``ludotheque serve --workers N`` (the production gunicorn
configuration, ``service/server/gunicorn_conf.py``, gevent workers) and then, under
that same configuration, the bare Flask baseline of ``bench/baseline_app.py``.
K simulated clients, each on its own keep-alive connection, drive them in
phases of ``--seconds`` each (after a short warm-up):

- ``play``: real matches of every game (client i plays game i mod 4, two
  players): create, then view, legal actions and one action, until the end;
- ``action``: actions as fast as they go, from a random playout computed
  before the phase (so the client does no engine work), over fresh matches;
- ``view``: the match as a seat sees it, again and again;
- ``turns``: Dékal matches of two seats played as issue 34 plays them: each
  seat waits for its turn with ``GET ...?legal_actions=true&wait=30`` (a
  long poll), then plays one of the legal actions the answer lists with
  ``POST .../actions?legal_actions=true``; it also reports the server's
  CPU per action (per move); run only when ``--phases`` names it;
- ``player``: ``action`` again, with every seat held by a player (issue 36):
  the matches are created by an app for two of its players each, and every
  action carries the player's token (``ldq_player_…``) instead of a seat
  token; run only when ``--phases`` names it; its ``action`` endpoint is
  compared with ``action``'s (``player_vs_seat``);
- ``rmw`` and ``get``: the baseline's Lua read-modify-write and GET;
- ``half``: ``play`` paced at half the request rate ``play`` reached, or at
  ``--half-rate`` requests/s (to compare two versions at the same load).

It prints, per phase and endpoint, requests/s, p50/p95/p99 latency and
errors, and the CPU the server (every process of ``serve``) and Redis spent
per request, a figure that moves less with the machine's load than the
rates do; then the ratios (action vs read-modify-write, view vs GET) and the
action p99 at half load, and writes them all to ``bench/results/load.json``
(``bench.results``; ``--json PATH`` elsewhere). It also counts the
Redis round trips per request and the Redis memory per match (every game at
its largest player count), in process, with Flask's test client::

    python -m bench.load --seconds 10 --clients 32 --workers 2
    python -m bench.load --seconds 3 --clients 16 --workers 2

``--in-process`` measures instead the CPU of the two requests of a move
(issue 34), the WSGI app called directly on a private Redis, as a gunicorn
worker runs it (metrics in multiprocess mode, the access log written to
/dev/null), with no HTTP server: the mover's ``POST .../actions
?legal_actions=true`` and the waiting seat's ``GET ...?legal_actions=true
&wait=30`` answered (its turn has come), in Dékal matches of two seats.
It prints the best CPU µs per request over ``--rounds``; under callgrind,
each kind of request lands in a dump of its own (they are separated by
``os.getppid()``), whose instructions divided by the requests printed are
the steadiest figure on a busy machine::

    python -m bench.load --in-process --rounds 5
    valgrind --tool=callgrind --dump-before=getppid python -m bench.load --in-process --rounds 0
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import ipaddress
import itertools
import logging
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import orjson
import redis
import requests

from bench import baseline_app, results
from engines import GAMES
from service.store.counters import PREFIX
from service.store.embedded import EmbeddedRedis, free_port

ROOT = Path(__file__).resolve().parent.parent
GUNICORN_CONF = ROOT / "service" / "server" / "gunicorn_conf.py"
HOST = "127.0.0.1"
GAME_NAMES = sorted(GAMES)
PLAYERS = 2  # every game takes two; the costs below use each game's largest count
# Ducale to 500 points runs to thousands of actions: a shorter target keeps
# matches (and the log each one grows) comparable with the other games'.
OPTIONS: dict[str, dict[str, Any]] = {"ducale": {"target_score": 100}}
PHASES = ("play", "action", "player", "view", "turns", "rmw", "get", "half")
DEFAULT_PHASES = ("play", "action", "view", "rmw", "get", "half")  # turns: when asked
LIMITS_PREFIX = PREFIX.encode()
REQUESTS_PER_CONNECTION = 100
TARGETS = {"action_vs_rmw": 0.7, "view_vs_get": 0.8, "action_p99_ms_at_half_load": 25.0}


# -- a small HTTP/1.1 client: keep-alive, Content-Length bodies only -------------
class Http:
    """One keep-alive connection at a time; ``request`` returns (status, body).

    A connection stays with the gunicorn worker that accepted it, and which
    worker accepts is up to the kernel: 32 connections opened at once may
    all land on one worker, halving the throughput of a run. So a client
    opens a new connection every ``REQUESTS_PER_CONNECTION`` requests, as
    a population of real clients would, and the load spreads over the
    workers. The load generator shares two cores with the server, so it
    parses no more of a response than it needs.
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.host_header = f"Host: {HOST}:{port}\r\n".encode()
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.used = 0

    async def request(
        self, method: bytes, path: str, body: bytes = b"", headers: bytes = b""
    ) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(HOST, self.port)
            self.used = 0
        assert self.reader is not None
        self.used += 1
        head = b"%s %s HTTP/1.1\r\n%s%s" % (method, path.encode(), self.host_header, headers)
        if body:
            head += b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        try:
            self.writer.write(head + b"\r\n" + body)
            raw = await self.reader.readuntil(b"\r\n\r\n")
            status = int(raw[9:12])
            length = 0
            close = False
            for line in raw.lower().split(b"\r\n")[1:]:
                if line.startswith(b"content-length:"):
                    length = int(line[15:])
                elif line.startswith(b"connection:") and b"close" in line:
                    close = True
                elif line.startswith(b"transfer-encoding:"):
                    raise ValueError("chunked answers are not expected here")
            data = await self.reader.readexactly(length) if length else b""
        except BaseException:
            self.close()
            raise
        if close or self.used >= REQUESTS_PER_CONNECTION:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


# -- recording --------------------------------------------------------------------
@dataclass
class Recording:
    """Latencies (s) per endpoint of the requests started in the window."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))

    def merge(self, other: Recording) -> None:
        for name, values in other.latencies.items():
            self.latencies[name].extend(values)
        for name, counts in other.errors.items():
            self.errors[name].update(counts)


class Pacer:
    """Spaces requests ``1/rate`` apart across all clients of a process; a
    client that is late sends at once, and no debt accumulates."""

    def __init__(self, rate: float) -> None:
        self.interval = 1 / rate
        self.next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        slot = max(self.next, now)
        self.next = slot + self.interval
        if slot > now:
            await asyncio.sleep(slot - now)


@dataclass
class Client:
    index: int
    http: Http
    recording: Recording
    window: tuple[float, float]  # monotonic start and end of the measured window
    pacer: Pacer | None
    prepared: Any = None  # what the workload set up before the phase

    @property
    def running(self) -> bool:
        return time.monotonic() < self.window[1]

    async def call(
        self,
        endpoint: str | None,
        method: bytes,
        path: str,
        body: bytes = b"",
        headers: bytes = b"",
        also: str | None = None,
        http: Http | None = None,
    ) -> tuple[int, bytes]:
        """One timed request (on ``http``, else the client's connection);
        ``endpoint`` None: not recorded (set-up)."""
        if self.pacer is not None and endpoint is not None:
            await self.pacer.wait()
        start = time.monotonic()
        try:
            status, data = await (http or self.http).request(method, path, body, headers)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            status, data = 0, b""
        elapsed = time.monotonic() - start
        if endpoint is not None and self.window[0] <= start < self.window[1]:
            for name in (endpoint, also) if also else (endpoint,):
                self.recording.latencies[name].append(elapsed)
                if not 200 <= status < 300:
                    self.recording.errors[name][status] += 1
        return status, data


def bearer(token: str) -> bytes:
    return b"Authorization: Bearer %s\r\n" % token.encode()


def game_of(index: int) -> str:
    return GAME_NAMES[index % len(GAME_NAMES)]


def create_body(game: str, seed: int) -> bytes:
    body: dict[str, Any] = {"players": [{"name": f"P{i}"} for i in range(PLAYERS)], "seed": seed}
    if game in OPTIONS:
        body["options"] = OPTIONS[game]
    return orjson.dumps(body)


async def create(client: Client, game: str, seed: int) -> tuple[str, list[str], list[int]] | None:
    status, data = await client.call(
        "create", b"POST", f"/v1/games/{game}/matches", create_body(game, seed)
    )
    if status != 201:
        return None
    match = orjson.loads(data)
    return match["id"], [seat["token"] for seat in match["seats"]], match["to_act"]


# -- workloads --------------------------------------------------------------------
async def play(client: Client) -> None:
    """Real matches: view, legal actions, one action, until the end."""
    game = game_of(client.index)
    rng = random.Random(client.index)
    while client.running:
        created = await create(client, game, rng.getrandbits(32))
        if created is None:
            continue
        match_id, tokens, to_act = created
        url = f"/v1/games/{game}/matches/{match_id}"
        while to_act and client.running:
            seat = rng.choice(to_act)
            auth = bearer(tokens[seat])
            status, _ = await client.call("view", b"GET", url, headers=auth)
            if status != 200:
                break
            status, data = await client.call("legal", b"GET", url + "/legal-actions", headers=auth)
            if status != 200:
                break
            action = rng.choice(orjson.loads(data)["actions"])
            status, data = await client.call(
                "action", b"POST", url + "/actions", orjson.dumps(action), auth, f"action[{game}]"
            )
            if status != 200:
                break
            to_act = orjson.loads(data)["to_act"]


def playout(game_name: str, seed: int = 1) -> list[tuple[int, bytes]]:
    """A random match as (seat, action JSON) pairs, for a match created with ``seed``."""
    game = GAMES[game_name]
    options = game.options_schema().load(OPTIONS.get(game_name, {}))
    state = game.setup(options, PLAYERS, seed)
    rng = random.Random(seed)
    script = []
    while seats := game.to_act(state):
        seat = rng.choice(seats)
        action = rng.choice(game.legal_actions(state, seat))
        game.apply(state, seat, action)
        script.append((seat, orjson.dumps(action)))
    return script


SCRIPTS: dict[str, list[tuple[int, bytes]]] = {}


def script_of(game: str) -> list[tuple[int, bytes]]:
    if game not in SCRIPTS:
        SCRIPTS[game] = playout(game)
    return SCRIPTS[game]


async def create_for_players(
    client: Client, game: str, seed: int
) -> tuple[str, list[str], list[int]] | None:
    """A match of the client's app, each seat given to one of its players
    (``client.prepared``: the app's key, then each player's id and token)."""
    key, players = client.prepared
    body: dict[str, Any] = {"players": [{"player": p} for p, _ in players], "seed": seed}
    if game in OPTIONS:
        body["options"] = OPTIONS[game]
    status, data = await client.call(
        "create", b"POST", f"/v1/games/{game}/matches", orjson.dumps(body), bearer(key)
    )
    if status != 201:
        return None
    return orjson.loads(data)["id"], [token for _, token in players], []


async def scripted_actions(client: Client) -> None:
    """Actions only, each known in advance: the server's cost of an action
    (with players' tokens when the client was given players)."""
    game = game_of(client.index)
    script = script_of(game)
    while client.running:
        if client.prepared is None:
            created = await create(client, game, 1)
        else:
            created = await create_for_players(client, game, 1)
        if created is None:
            continue
        match_id, tokens, _ = created
        path = f"/v1/games/{game}/matches/{match_id}/actions"
        for seat, action in script:
            if not client.running:
                break
            status, _ = await client.call(
                "action", b"POST", path, action, bearer(tokens[seat]), f"action[{game}]"
            )
            if status != 200:
                break


async def views(client: Client) -> None:
    """The match as one seat sees it, a few moves in (made before the phase)."""
    game, match_id, tokens = client.prepared
    url = f"/v1/games/{game}/matches/{match_id}"
    auth = [bearer(token) for token in tokens]
    turn = 0
    while client.running:
        await client.call(
            "view", b"GET", url, headers=auth[turn % len(auth)], also=f"view[{game}]"
        )
        turn += 1


async def turns(client: Client) -> None:
    """Dékal matches of two seats, each seat on a connection of its own,
    waiting for its turn by long poll and playing with ``legal_actions``."""
    rng = random.Random(client.index)
    other = Http(client.http.port)
    try:
        while client.running:
            created = await create(client, "dekal", rng.getrandbits(32))
            if created is None:
                continue
            match_id, tokens, _ = created
            url = f"/v1/games/dekal/matches/{match_id}"
            connections = (client.http, other)
            seats = [
                seat_plays(client, connections[seat], url, bearer(tokens[seat]), seat, rng)
                for seat in (0, 1)
            ]
            # a seat left waiting when the window ends is not waited for
            left = client.window[1] - time.monotonic() + 2
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*seats), max(left, 0.1))
    finally:
        other.close()


async def seat_plays(
    client: Client, http: Http, url: str, auth: bytes, seat: int, rng: random.Random
) -> None:
    """One seat of ``turns``: wait for its turn, play, until the match ends."""
    answer: dict[str, Any] | None = None
    while client.running:
        if answer is None or seat not in answer["to_act"]:
            path = f"{url}?legal_actions=true&wait=30"
            status, data = await client.call("poll", b"GET", path, headers=auth, http=http)
            if status != 200:
                return
            answer = orjson.loads(data)
        if answer["status"] == "finished":
            return
        if seat not in answer["to_act"]:
            continue  # the wait ran out before its turn came
        action = orjson.dumps(rng.choice(answer["legal_actions"]))
        path = f"{url}/actions?legal_actions=true"
        status, data = await client.call("action", b"POST", path, action, auth, http=http)
        answer = orjson.loads(data) if status == 200 else None


def prepare_views(port: int, clients: int) -> dict[int, Any]:
    """One match per client, ten actions in, for the ``view`` phase."""
    prepared = {}
    with requests.Session() as http:
        for index in range(clients):
            game = game_of(index)
            base = f"http://{HOST}:{port}/v1/games/{game}/matches"
            created = http.post(base, data=create_body(game, 1), headers=JSON_HEADERS)
            created.raise_for_status()
            match = created.json()
            tokens = [seat["token"] for seat in match["seats"]]
            for seat, action in script_of(game)[:10]:
                http.post(
                    f"{base}/{match['id']}/actions",
                    data=action,
                    headers={**JSON_HEADERS, "Authorization": f"Bearer {tokens[seat]}"},
                ).raise_for_status()
            prepared[index] = (game, match["id"], tokens)
    return prepared


JSON_HEADERS = {"Content-Type": "application/json"}


def prepare_players(port: int, clients: int, env: dict[str, str]) -> dict[int, Any]:
    """An app (``ludotheque apps create``, on the server's database and Redis)
    and two players of it per client, for the ``player`` phase."""
    made = subprocess.run(
        [sys.executable, "-m", "service.cli", "apps", "create", "bench"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    key = dict(line.split(" ", 1) for line in made.stdout.splitlines())["key"]
    prepared = {}
    with requests.Session() as http:
        for index in range(clients):
            players = []
            for seat in range(PLAYERS):
                answer = http.post(
                    f"http://{HOST}:{port}/v1/apps/me/players",
                    json={"external_id": f"bench-{index}-{seat}", "name": f"P{seat}"},
                    headers={"Authorization": f"Bearer {key}"},
                )
                answer.raise_for_status()
                players.append((answer.json()["id"], answer.json()["token"]))
            prepared[index] = (key, players)
    return prepared


async def read_modify_write(client: Client) -> None:
    path = f"/rmw/{client.index}"
    while client.running:
        await client.call("rmw", b"POST", path)


async def get(client: Client) -> None:
    path = f"/get/{client.index}"
    while client.running:
        await client.call("get", b"GET", path)


WORKLOADS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "play": play,
    "action": scripted_actions,
    "player": scripted_actions,
    "view": views,
    "turns": turns,
    "rmw": read_modify_write,
    "get": get,
    "half": play,
}


# -- running a phase (in one or several processes) -----------------------------------
@dataclass
class PhaseSpec:
    workload: str
    port: int
    clients: list[int]
    start: float  # monotonic, shared by every process (CLOCK_MONOTONIC is system-wide)
    warmup: float
    seconds: float
    rate: float | None  # requests/s for this process, None: as fast as possible
    prepared: dict[int, Any] = field(default_factory=dict)


def run_clients(spec: PhaseSpec) -> tuple[Recording, float]:
    """Run ``spec.clients`` in this process; the recording and the CPU seconds used."""
    if spec.workload == "action":
        for game in {game_of(i) for i in spec.clients}:
            script_of(game)
    cpu = time.process_time()
    recording = asyncio.run(drive(spec))
    return recording, time.process_time() - cpu


async def drive(spec: PhaseSpec) -> Recording:
    recording = Recording()
    pacer = Pacer(spec.rate) if spec.rate else None
    window = (spec.start + spec.warmup, spec.start + spec.warmup + spec.seconds)
    delay = spec.start - time.monotonic()
    if delay > 0:
        await asyncio.sleep(delay)
    clients = [
        Client(i, Http(spec.port), recording, window, pacer, spec.prepared.get(i))
        for i in spec.clients
    ]
    await asyncio.gather(*(WORKLOADS[spec.workload](client) for client in clients))
    for client in clients:
        client.http.close()
    return recording


def run_phase(
    workload: str,
    port: int,
    clients: int,
    procs: int,
    warmup: float,
    seconds: float,
    rate: float | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    groups = [list(range(clients))[p::procs] for p in range(procs)]
    prepared = {}
    if workload == "view":
        prepared = prepare_views(port, clients)
    elif workload == "player":
        prepared = prepare_players(port, clients, env or dict(os.environ))
    # Spawned processes need a moment to import before the shared start.
    start = time.monotonic() + (1.5 if procs > 1 else 0.1)
    specs = [
        PhaseSpec(
            workload,
            port,
            group,
            start,
            warmup,
            seconds,
            rate / procs if rate else None,
            {i: prepared[i] for i in group if i in prepared},
        )
        for group in groups
    ]
    if procs == 1:
        results = [run_clients(specs[0])]
    else:
        with multiprocessing.get_context("spawn").Pool(procs) as pool:
            results = pool.map(run_clients, specs)
    recording = Recording()
    for part, _ in results:
        recording.merge(part)
    wall = warmup + seconds
    return {
        "clients": clients,
        "warmup": warmup,
        "seconds": seconds,
        "rate": rate,
        "client_cpu": sum(cpu for _, cpu in results) / wall,
        "endpoints": {
            name: summary(values, recording.errors.get(name, Counter()), seconds)
            for name, values in sorted(recording.latencies.items())
        },
    }


def summary(latencies: list[float], errors: Counter, seconds: float) -> dict[str, Any]:
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 2)

    return {
        "requests": len(ordered),
        "rps": round(len(ordered) / seconds, 1),
        "p50_ms": pct(0.50),
        "p95_ms": pct(0.95),
        "p99_ms": pct(0.99),
        "errors": sum(errors.values()),
        "error_statuses": {str(status): n for status, n in sorted(errors.items())},
    }


# -- servers --------------------------------------------------------------------
@contextlib.contextmanager
def redis_server(data_dir: Path) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        host = urlparse(url).hostname or ""
        loopback = host == "localhost" or (
            host.replace(".", "").replace(":", "").isalnum() and is_loopback(host)
        )
        if not loopback:
            raise SystemExit(f"REDIS_URL must be a loopback address for this benchmark: {host}")
        yield url
        return
    # No persistence: the store in production is a managed Redis, and an
    # append-only file on this shared disk would only add noise.
    with EmbeddedRedis(data_dir, persist=False) as url:
        yield url


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@contextlib.contextmanager
def serving(
    command: list[str], env: dict[str, str], port: int, probe: str, log: Path, workers: int
) -> Iterator[subprocess.Popen]:
    """Run ``command`` (in a session of its own, its output in ``log``) until
    the block ends, from the moment its ``workers`` gunicorn workers are up."""
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=output, stderr=output, start_new_session=True
        )
    try:
        answering(process, command, f"http://{HOST}:{port}{probe}", log)
        workers_booted(process, workers)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """Stop a server started for a benchmark: SIGTERM, then SIGKILL after 30 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def answering(
    process: subprocess.Popen, command: list[str], url: str, log: Path, timeout: float = 60
) -> None:
    """Wait until ``url`` answers below 500; stop the benchmark, with the end
    of ``log``, if ``process`` (run as ``command``) exits or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise SystemExit(f"{command} exited:\n{log.read_text()[-3000:]}")
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=2).status_code < 500:
                return
        if time.monotonic() > deadline:
            raise SystemExit(f"{command} did not answer at {url}")
        time.sleep(0.2)


def workers_booted(process: subprocess.Popen, workers: int, timeout: float = 60) -> None:
    """Wait until the gunicorn master has ``workers`` workers and they are
    idle. The probe is answered by the first worker up: a phase started then
    would find the others booting, count none of their CPU (``server_cpu``
    lists the processes when it starts) and send every connection to one."""
    master = gunicorn_master(process)
    deadline = time.monotonic() + timeout
    used = -1.0
    while time.monotonic() < deadline:
        pids = process_tree(master)[1:]
        now = cpu_seconds(pids)
        if len(pids) >= workers and now - used < 0.02:
            return
        used = now
        time.sleep(0.5)
    raise SystemExit(f"gunicorn did not start {workers} workers in {timeout:.0f} s")


def gunicorn_master(process: subprocess.Popen) -> int:
    """The gunicorn master: ``process`` itself, or its child (``ludotheque serve``)."""
    if "gunicorn" in " ".join(map(str, process.args)):
        return process.pid
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    for child in children:
        if b"gunicorn" in Path(f"/proc/{child}/cmdline").read_bytes():
            return int(child)
    raise SystemExit("no gunicorn process to profile")


@contextlib.contextmanager
def profiling(directory: Path | None, process: subprocess.Popen, name: str) -> Iterator[None]:
    """With ``directory``, sample the gunicorn workers with py-spy during the
    block, as collapsed stacks in ``<directory>/<name>.txt`` (for flamegraph
    tools or speedscope)."""
    if directory is None:
        yield
        return
    directory.mkdir(parents=True, exist_ok=True)
    command = ["py-spy", "record", "--pid", str(gunicorn_master(process)), "--subprocesses"]
    command += ["--rate", "200", "--format", "raw", "--output", str(directory / f"{name}.txt")]
    spy = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)


def process_tree(pid: int) -> list[int]:
    """``pid`` and every process below it (``ludotheque serve``, gunicorn, its workers)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
    return found


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by ``pids`` (exited ones count 0)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def machine_ticks() -> tuple[int, int]:
    """(all, stolen) CPU ticks of the machine so far: a virtual machine's
    steal time is CPU its host gave to others, which slows a run down."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(ticks[:8]), ticks[7]
    return 0, 0


@contextlib.contextmanager
def server_cpu(process: subprocess.Popen, redis_pid: int | None) -> Iterator[dict[str, float]]:
    """The CPU seconds the server (every process of its tree) and Redis use
    during the block, and the share of the machine's time stolen by its
    host, in the dict yielded (filled when the block ends)."""
    servers = process_tree(process.pid)
    redis_pids = [redis_pid] if redis_pid else []
    used: dict[str, float] = {}
    start = cpu_seconds(servers), cpu_seconds(redis_pids), machine_ticks()
    yield used
    used["server"] = cpu_seconds(servers) - start[0]
    used["redis"] = cpu_seconds(redis_pids) - start[1]
    ticks = machine_ticks()
    elapsed = ticks[0] - start[2][0]
    used["stolen"] = (ticks[1] - start[2][1]) / elapsed if elapsed > 0 else 0.0


def redis_pid(url: str) -> int | None:
    """The pid of the (loopback) Redis at ``url``, to count its CPU."""
    client = redis.Redis.from_url(url)
    try:
        return int(client.info("server")["process_id"])
    except (redis.RedisError, KeyError, ValueError):
        return None
    finally:
        client.close()


def measured_phase(
    process: subprocess.Popen, redis_at: int | None, profile: Path | None, name: str, **run: Any
) -> dict[str, Any]:
    """``run_phase``, sampled by py-spy with ``profile``, with the CPU the
    server and Redis spent per request (over the warm-up and the measured
    seconds, at the measured rate)."""
    with profiling(profile, process, name), server_cpu(process, redis_at) as used:
        phase = run_phase(name, **run)
    served = total_rps(phase) * (phase["warmup"] + phase["seconds"])
    phase["stolen"] = round(used.pop("stolen"), 4)
    phase["cpu_us_per_request"] = {
        part: round(seconds / served * 1e6, 1) if served else None
        for part, seconds in used.items()
    }
    if name == "turns":  # per move: the action and its share of the long polls
        moves = phase["endpoints"].get("action", {}).get("rps", 0) * (
            phase["warmup"] + phase["seconds"]
        )
        phase["cpu_us_per_move"] = {
            part: round(seconds / moves * 1e6, 1) if moves else None
            for part, seconds in used.items()
        }
    return phase


# Leaf frames of a worker waiting for work (gevent's hub, its thread pool):
# samples that end there are idle time, not cost.
IDLE_FRAMES = ("Hub.run ", "acquire_with_timeout ", "_WorkerGreenlet.run ", "wait ")
WATCHED_FRAMES = (
    "Limiter._check_request_limit",
    "Matches.play",
    "Matches.load",
    "Store.load",
    "Store.commit",
    "Store.schedule",
    "load_action",
    "apply_logged",
    "present",
    "json_response",
    "Response.write",
    "Parser.__next__",
    "init_observability",
    "Logger.info",
    "Flask.preprocess_request",
    "Flask.finalize_request",
)


def profile_summary(path: Path, top: int = 10) -> list[str]:
    """Where the busy samples of a py-spy raw profile go: by package of the
    innermost frame (own time), then under the frames this service cares about."""
    busy = 0
    own: Counter = Counter()
    under: Counter = Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not count.isdigit() or frames[-1].startswith(IDLE_FRAMES):
            continue
        busy += int(count)
        own[package_of(frames[-1])] += int(count)
        for name in {frame.split(" (")[0] for frame in frames}:
            under[name] += int(count)
    if not busy:
        return [f"  {path.name}: no busy samples"]
    lines = [f"  {path.name}: {busy} busy samples; own time by package:"]
    lines += [f"    {n / busy:6.1%}  {name}" for name, n in own.most_common(top)]
    lines.append("  under these frames:")
    for watched in WATCHED_FRAMES:
        count = sum(n for name, n in under.items() if watched in name)
        if count:
            lines.append(f"    {count / busy:6.1%}  {watched}")
    return lines


def package_of(frame: str) -> str:
    """``f (redis/connection.py:12)`` -> ``redis``; py-spy names the
    project's modules and the standard library's by their file alone."""
    path = frame.rpartition(" (")[2].rstrip(")").rsplit(":", 1)[0]
    return path.split("/")[0] if "/" in path else path


def server_env(redis_url: str, port: int, workers: int, rate_limits: bool) -> dict[str, str]:
    env = dict(os.environ)
    if rate_limits:
        # Every simulated client comes from 127.0.0.1: the limiter does its
        # work (and its round trips) on every request, but never refuses one.
        env["LUDOTHEQUE_RATE_LIMIT_PER_ADDRESS"] = "1000000000/minute"
        env["LUDOTHEQUE_RATE_LIMIT_PER_TOKEN"] = "1000000000/minute"
        # and the creation quotas count every creation without refusing one
        env["LUDOTHEQUE_RATE_LIMIT_CREATE"] = "1000000000/minute"
        env["LUDOTHEQUE_MAX_WAITING_PER_ADDRESS"] = "1000000000"
    else:
        env["LUDOTHEQUE_RATE_LIMITS"] = "0"
    env.update(
        REDIS_URL=redis_url,
        LUDOTHEQUE_BIND=f"{HOST}:{port}",
        LUDOTHEQUE_WORKERS=str(workers),
        # Matches created here need not outlive the run by much.
        LUDOTHEQUE_FINISHED_TTL="600",
        LUDOTHEQUE_IDLE_TTL="3600",
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
    )
    return env


# -- costs: round trips and memory, in process --------------------------------------
class RoundTrips:
    """Counts what redis-py sends while ``counting``: one packed send is one
    round trip (a pipeline sends all its commands at once). Round trips
    made for the rate limits alone (not riding on a match read) are counted
    apart too."""

    def __init__(self) -> None:
        self.count = 0
        self.limiter = 0
        self.counting = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[RoundTrips]:
        original = redis.connection.AbstractConnection.send_packed_command
        counter = self

        def send(connection: Any, command: Any, check_health: bool = True) -> None:
            if counter.counting:
                counter.count += 1
                packed = command if isinstance(command, bytes) else b"".join(map(bytes, command))
                counter.limiter += LIMITS_PREFIX in packed and b"m:{" not in packed
            return original(connection, command, check_health)

        redis.connection.AbstractConnection.send_packed_command = send
        try:
            yield self
        finally:
            redis.connection.AbstractConnection.send_packed_command = original

    @contextlib.contextmanager
    def measure(self) -> Iterator[None]:
        self.counting = True
        try:
            yield
        finally:
            self.counting = False


def match_memory(client: redis.Redis, match_id: str) -> int:
    keys = [f"m:{{{match_id}}}", f"m:{{{match_id}}}:log"]
    return sum(client.memory_usage(key, samples=0) or 0 for key in keys)


def measure_costs(redis_url: str) -> dict[str, Any]:
    """Round trips per request and Redis bytes per match, every game at its
    largest player count, one random match each."""
    from service.app import create_app

    app = create_app(
        {
            "REDIS_URL": redis_url,
            "FINISHED_TTL": 600,
            "IDLE_TTL": 3600,
            "RATE_LIMIT_PER_ADDRESS": "1000000000/minute",
            "RATE_LIMIT_PER_TOKEN": "1000000000/minute",
        }
    )
    http = app.test_client()
    probe = redis.Redis.from_url(redis_url)
    trips: dict[str, list[int]] = defaultdict(list)
    limiter_trips: dict[str, list[int]] = defaultdict(list)
    memory: dict[str, dict[str, int]] = {}
    counter = RoundTrips()

    def counted(endpoint: str, method: str, path: str, **kwargs: Any) -> Any:
        before, limiter_before = counter.count, counter.limiter
        with counter.measure():
            answer = http.open(path, method=method, **kwargs)
        trips[endpoint].append(counter.count - before)
        limiter_trips[endpoint].append(counter.limiter - limiter_before)
        return answer

    with counter.installed():
        for name in GAME_NAMES:
            game = GAMES[name]
            rng = random.Random(7)
            players = game.max_players
            body: dict[str, Any] = {"players": [{"name": f"P{i}"} for i in range(players)]}
            body["seed"] = 7
            if name in OPTIONS:
                body["options"] = OPTIONS[name]
            # The first request loads the Lua scripts: leave it out.
            http.post(f"/v1/games/{name}/matches", json=body)
            match = counted("create", "POST", f"/v1/games/{name}/matches", json=body).get_json()
            url = f"/v1/games/{name}/matches/{match['id']}"
            tokens = [seat["token"] for seat in match["seats"]]
            sizes = [match_memory(probe, match["id"])]
            to_act = match["to_act"]
            while to_act:
                headers = {"Authorization": f"Bearer {tokens[rng.choice(to_act)]}"}
                counted("view", "GET", url, headers=headers)
                legal = counted("legal", "GET", url + "/legal-actions", headers=headers)
                action = rng.choice(legal.get_json()["actions"])
                played = counted("action", "POST", url + "/actions", json=action, headers=headers)
                assert played.status_code == 200, played.get_data(as_text=True)
                to_act = played.get_json()["to_act"]
                sizes.append(match_memory(probe, match["id"]))
            memory[name] = {
                "players": players,
                "actions": len(sizes) - 1,
                "bytes_at_start": sizes[0],
                "bytes_peak": max(sizes),
                "bytes_at_end": sizes[-1],
            }
    probe.close()
    return {
        "round_trips": {
            endpoint: {
                "mean": round(sum(v) / len(v), 2),
                "max": max(v),
                "rate_limiter_mean": round(sum(limiter_trips[endpoint]) / len(v), 2),
            }
            for endpoint, v in sorted(trips.items())
        },
        "memory": memory,
    }


# -- in process: the CPU of a move's two requests ---------------------------------
def wsgi_environ(method: str, path: str, query: str = "", body: bytes = b"", token: str = ""):
    """A request's WSGI environ, as gunicorn makes it (less its own keys)."""
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "SCRIPT_NAME": "",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "RAW_URI": f"{path}?{query}" if query else path,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": HOST,
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": HOST,
        "REMOTE_PORT": "40000",
        "HTTP_HOST": f"{HOST}:8000",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if body:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(body))
    if token:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return environ


def wsgi_call(app: Any, environ: dict[str, Any]) -> tuple[str, bytes]:
    """The status and body of ``app``'s answer to ``environ``."""
    statuses = []
    answer = app(environ, lambda status, headers, exc_info=None: statuses.append(status))
    try:
        body = b"".join(answer)
    finally:
        if hasattr(answer, "close"):
            answer.close()
    return statuses[0], body


def in_process(rounds: int, matches: int, moves: int, out: Callable[[str], None]) -> dict:
    """The best CPU µs per action and per answered long poll over ``rounds``
    (``matches`` new Dékal matches of ``moves`` moves each per round)."""
    if "prometheus_client" in sys.modules:
        raise SystemExit("--in-process must set up the metrics before prometheus_client loads")
    game = "dekal"
    script = script_of(game)[: moves + 1]
    with (
        tempfile.TemporaryDirectory(prefix="ludotheque-bench-") as tmp,
        EmbeddedRedis(Path(tmp) / "redis", persist=False) as redis_url,
    ):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(Path(tmp))
        from service.app import create_app
        from service.observability import configure_logging
        from service.server import collector

        configure_logging()
        logging.getLogger().handlers[0].setStream(open(os.devnull, "w"))  # noqa: SIM115
        app = create_app(
            {
                "REDIS_URL": redis_url,
                "RATE_LIMIT_PER_ADDRESS": "1000000000/minute",
                "RATE_LIMIT_PER_TOKEN": "1000000000/minute",
                "RATE_LIMIT_CREATE": "1000000000/minute",
                "MAX_WAITING_PER_ADDRESS": 1000000000,
                "PROMETHEUS_MULTIPROC_DIR": str(Path(tmp)),
            }
        )

        def moves_of(count: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
            """Each move of ``count`` new matches: its action, then the view
            of the seat to act next, in the order they are played."""
            pairs = []
            for _ in range(count):
                status, data = wsgi_call(
                    app,
                    wsgi_environ("POST", f"/v1/games/{game}/matches", body=create_body(game, 1)),
                )
                assert status.startswith("201"), data
                match = orjson.loads(data)
                url = f"/v1/games/{game}/matches/{match['id']}"
                tokens = [seat["token"] for seat in match["seats"]]
                for (seat, action), (next_seat, _) in itertools.pairwise(script):
                    move = "POST", f"{url}/actions", "legal_actions=true", action, tokens[seat]
                    answered = "GET", url, "legal_actions=true&wait=30", b"", tokens[next_seat]
                    pairs.append((wsgi_environ(*move), wsgi_environ(*answered)))
            return pairs

        def play(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[float, float]:
            spent = [0.0, 0.0]
            for pair in pairs:
                for kind, environ in enumerate(pair):
                    start = time.process_time()
                    status, data = wsgi_call(app, environ)
                    spent[kind] += time.process_time() - start
                    assert status.startswith("200"), data
            return spent[0] / len(pairs) * 1e6, spent[1] / len(pairs) * 1e6

        play(moves_of(2))  # warm
        collector.settle()  # as each gunicorn worker does once the app is loaded
        best = [float("inf"), float("inf")]
        for number in range(rounds):
            action_us, view_us = play(moves_of(matches))
            best = [min(best[0], action_us), min(best[1], view_us)]
            out(f"  round {number + 1}: action {action_us:.0f} µs, view {view_us:.0f} µs")
        # For callgrind (--dump-before=getppid), each kind in a dump of its
        # own: the moves' actions, then views of where they left each match,
        # by the seat to act then, as many.
        pairs = moves_of(matches)
        os.getppid()
        for action, _ in pairs:
            wsgi_call(app, action)
        os.getppid()
        for _, view in pairs[moves - 1 :: moves]:
            for _ in range(moves):
                view["wsgi.input"].seek(0)
                status, data = wsgi_call(app, view)
                assert status.startswith("200"), data
        os.getppid()
        out(f"callgrind: {len(pairs)} actions in the second dump, {len(pairs)} views in the third")
    if rounds:
        out(f"best CPU per request: action {best[0]:.0f} µs, view {best[1]:.0f} µs")
    return {"action_us": best[0], "view_us": best[1]}


# -- reporting --------------------------------------------------------------------
def report_phase(name: str, phase: dict[str, Any], out: Callable[[str], None]) -> None:
    rate = f", paced at {phase['rate']:.0f} req/s" if phase["rate"] else ""
    out(
        f"\n{name}: {phase['clients']} clients, {phase['seconds']:.0f} s{rate}, "
        f"load generator CPU {phase['client_cpu']:.0%} of a core"
    )
    cpu = phase.get("cpu_us_per_request")
    if cpu:
        out(
            f"  CPU per request: server {cpu['server']} µs, Redis {cpu['redis']} µs; "
            f"stolen by the host: {phase['stolen']:.1%} of the machine's time"
        )
    per_move = phase.get("cpu_us_per_move")
    if per_move:
        out(f"  CPU per move: server {per_move['server']} µs, Redis {per_move['redis']} µs")
    out(f"  {'endpoint':18} {'req/s':>9} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for endpoint, s in phase["endpoints"].items():
        out(
            f"  {endpoint:18} {s['rps']:9.1f} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} "
            f"{s['p99_ms']:8.2f} {s['errors']:7d}"
        )


def total_rps(phase: dict[str, Any]) -> float:
    """Requests/s over every endpoint (per-game breakdowns, ``name[game]``, left out)."""
    return sum(s["rps"] for name, s in phase["endpoints"].items() if "[" not in name)


def rps(phases: dict[str, Any], phase: str, endpoint: str) -> float:
    return phases.get(phase, {}).get("endpoints", {}).get(endpoint, {}).get("rps", 0.0)


def headline(phases: dict[str, Any]) -> dict[str, Any]:
    def ratio(a: float, b: float) -> float | None:
        return round(a / b, 3) if a and b else None

    half = phases.get("half", {}).get("endpoints", {}).get("action", {})
    return {
        "ratios": {
            "action_vs_rmw": ratio(rps(phases, "action", "action"), rps(phases, "rmw", "rmw")),
            "view_vs_get": ratio(rps(phases, "view", "view"), rps(phases, "get", "get")),
            # an action with a player's token against one with a seat token
            "player_vs_seat": ratio(
                rps(phases, "player", "action"), rps(phases, "action", "action")
            ),
        },
        "action_p99_ms_at_half_load": half.get("p99_ms"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10, help="measured seconds per phase")
    parser.add_argument("--clients", type=int, default=32, help="concurrent simulated clients")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--procs", type=int, default=1, help="load generator processes")
    parser.add_argument("--warmup", type=float, default=None, help="seconds (default S/5, ≤3)")
    parser.add_argument(
        "--phases",
        default=",".join(DEFAULT_PHASES),
        help=f"a subset of {','.join(PHASES)} (default {','.join(DEFAULT_PHASES)})",
    )
    parser.add_argument("--no-costs", action="store_true", help="skip round trips and memory")
    parser.add_argument(
        "--no-rate-limits",
        action="store_true",
        help="turn the rate limiter off (by default its limits are raised out of reach)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="sample the servers with py-spy (on PATH) during each phase, into DIR/<phase>.txt",
    )
    parser.add_argument(
        "--half-rate",
        type=float,
        help="pace the half phase at this many requests/s instead of half of play's",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="measure the CPU of a move's two requests in process instead (see above)",
    )
    parser.add_argument("--rounds", type=int, default=5, help="with --in-process")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    phases_wanted = [p for p in args.phases.split(",") if p]
    if unknown := set(phases_wanted) - set(PHASES):
        parser.error(f"unknown phases: {sorted(unknown)}")
    if args.clients < 1 or args.procs < 1 or args.seconds <= 0:
        parser.error("--clients, --procs and --seconds must be positive")
    if args.half_rate is not None and args.half_rate <= 0:
        parser.error("--half-rate must be positive")
    if args.profile and not shutil.which("py-spy"):
        parser.error("--profile needs py-spy on PATH (pip install py-spy)")
    warmup = args.warmup if args.warmup is not None else min(3.0, args.seconds / 5)

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    if args.in_process:
        out("in process: a move's action and its next seat's answered long poll (Dékal)")
        in_process(args.rounds, matches=8, moves=24, out=out)
        return 0
    facts = results.machine()
    out(
        f"Ludothèque load: {facts['cpus']} CPUs ({facts['cpu']}), Python {facts['python']}, "
        f"load average {facts['load_average']}"
    )
    out(f"{args.clients} clients, {args.workers} workers, {args.seconds:g} s per phase")
    phases: dict[str, Any] = {}
    costs: dict[str, Any] = {}
    run = {"warmup": warmup, "seconds": args.seconds, "procs": args.procs}
    with (
        tempfile.TemporaryDirectory(prefix="ludotheque-bench-") as tmp,
        redis_server(Path(tmp) / "redis") as redis_url,
    ):
        port = free_port()
        env = server_env(redis_url, port, args.workers, not args.no_rate_limits)
        redis_at = redis_pid(redis_url)
        service = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
        service += ["--workers", str(args.workers)]

        def measure(server: subprocess.Popen, name: str, **pace: Any) -> dict[str, Any]:
            return measured_phase(
                server,
                redis_at,
                args.profile,
                name,
                port=port,
                clients=args.clients,
                **run,
                **pace,
            )

        if {"play", "action", "player", "view", "turns", "half"} & set(phases_wanted):
            with serving(
                service, env, port, "/readyz", Path(tmp) / "serve.log", args.workers
            ) as server:
                for name in ("play", "action", "player", "view", "turns"):
                    if name in phases_wanted:
                        phases[name] = measure(server, name, env=env)
                        report_phase(name, phases[name], out)
                if "half" in phases_wanted:
                    if args.half_rate:
                        rate, said = args.half_rate, f"play paced at {args.half_rate:g} requests/s"
                    else:
                        if "play" not in phases:
                            phases["play"] = measure(server, "play")
                        rate, said = (
                            total_rps(phases["play"]) / 2,
                            "play at half the rate it reached",
                        )
                    phases["half"] = measure(server, "half", rate=rate)
                    report_phase(f"half ({said})", phases["half"], out)
        if {"rmw", "get"} & set(phases_wanted):
            client = redis.Redis.from_url(redis_url)
            for n in range(args.clients):
                client.set(baseline_app.key(n), baseline_app.initial_value(n))
            baseline = [
                sys.executable,
                "-m",
                "gunicorn",
                "--config",
                str(GUNICORN_CONF),
                "bench.baseline_app:create_app()",
            ]
            try:
                with serving(
                    baseline, env, port, "/get/0", Path(tmp) / "baseline.log", args.workers
                ) as server:
                    for name in ("rmw", "get"):
                        if name in phases_wanted:
                            phases[name] = measure(server, name)
                            report_phase(name, phases[name], out)
            finally:
                client.delete(*(baseline_app.key(n) for n in range(args.clients)))
                client.close()
        if not args.no_costs:
            costs = measure_costs(redis_url)
            report_costs(costs, out)
    if args.profile:
        out(f"\nprofiles (py-spy, collapsed stacks) in {args.profile}:")
        for name in phases:
            if (args.profile / f"{name}.txt").exists():
                for line in profile_summary(args.profile / f"{name}.txt"):
                    out(line)
    figures = headline(phases)
    out("\nratios (targets: action ≥ 0.7 of rmw, view ≥ 0.8 of get, action p99 ≤ 25 ms):")
    out(f"  action_vs_rmw {figures['ratios']['action_vs_rmw']}")
    out(f"  view_vs_get {figures['ratios']['view_vs_get']}")
    out(f"  action_p99_ms_at_half_load {figures['action_p99_ms_at_half_load']}")
    if args.json:
        document = {
            **figures,
            "targets": TARGETS,
            "load_average_at_start": facts["load_average"],
            "config": {
                "clients": args.clients,
                "workers": args.workers,
                "players": PLAYERS,
                "rate_limits": "off" if args.no_rate_limits else "raised out of reach",
                "options": OPTIONS,
                **run,
            },
            "phases": phases,
            "costs": costs,
        }
        out(f"wrote {results.write(args.json, 'load', argv, document)}")
    return 0


def report_costs(costs: dict[str, Any], out: Callable[[str], None]) -> None:
    out("\nRedis round trips per request: mean, max, of which the rate limiter's (mean)")
    for endpoint, trips in costs["round_trips"].items():
        out(
            f"  {endpoint:10} {trips['mean']:5.2f} {trips['max']:3d} "
            f"{trips['rate_limiter_mean']:5.2f}"
        )
    out("Redis memory per match (MEMORY USAGE of the match and its log), largest player count:")
    for name, m in costs["memory"].items():
        out(
            f"  {name:8} {m['players']} players, {m['actions']:4d} actions: "
            f"{m['bytes_at_start']:8d} B at start, {m['bytes_peak']:8d} B peak, "
            f"{m['bytes_at_end']:8d} B at the end"
        )


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("load")))
