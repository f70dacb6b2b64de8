"""Peer benchmark: Ludothèque against boardgame.io 0.50.2, the same game, the same load (issue 34).

Every phase starts a fresh server of one system, lets ``client.js`` play
whole two-player Dékal matches as fast as it can with ``--clients`` seats,
and measures the ``--seconds`` after a warm-up:

- ``bgio-memory``, ``bgio-flatfile``: ``node server.js`` (boardgame.io's
  ``Server`` serving the Dékal port of ``dekal.js``), in memory or with its
  FlatFile store (in a temporary folder); socket.io clients;
- ``ours-no``, ``ours-everysec``, ``ours-always``: ``ludotheque serve
  --workers N`` as in production (gunicorn with ``service/server/
  gunicorn_conf.py``, the bot workers ``serve`` starts, one per core, and
  its embedded Redis with an append-only file fsynced as
  ``LUDOTHEQUE_APPENDFSYNC`` says, in a temporary folder); HTTP clients, one
  request per move (``POST .../actions?legal_actions=true``), the waiting
  seat on ``GET ...?legal_actions=true&wait=30``;
- ``floor-no``, ``floor-everysec``, ``floor-always``: the floor of that
  stack, ``bench/baseline_app.py`` under the same gunicorn configuration
  and worker count, with a private Redis fsyncing its append-only file as
  for ``ours-*``: a move is one Lua read-modify-write of a 2 KB value that
  publishes a wake-up, the waiting seat a long poll woken by it; the same
  HTTP clients, the same requests per match (a create, then one request per
  move and a long poll per turn handed over), 64 moves a match as Dékal's.

Rounds alternate the systems (round 1: every system, then round 2...); in
each, a system runs once per ``--clients`` count on one server. For each
phase it reports moves per second, the mover's latency (p50, p99), the
handoff (a move's confirmation to the next seat learning it is its turn:
p50, p99, share over 500 ms), and the server CPU per move of every process
(user + system time, read from /proc at the window's ends): for Ludothèque
by kind (API workers, gunicorn master, bot workers, webhook work, Redis,
the ``serve`` supervisor; the floor's: API workers, gunicorn master,
Redis), with the requests per move of each kind and the
server time per request kind that ``/metrics`` gives. A summary table
gives each figure's range over the rounds; everything goes to
``bench/results/peer.json`` (``--json PATH`` elsewhere)::

    python -m bench.peer --clients 16,64 --rounds 3 --seconds 10
    python -m bench.peer --clients 2 --rounds 1 --seconds 3 --systems bgio-memory,ours-everysec

``--rate-limits on`` (the default) keeps the rate limits and quotas as
configured by default; the clients then play from many loopback addresses
(``--addresses``, 250), one match from each in turn, as a population of
players would, so that no creation quota refuses them. ``off`` sets
``LUDOTHEQUE_RATE_LIMITS=0``. Needs Node.js and npm: ``npm ci`` runs in
``bench/peer`` when its ``node_modules`` is missing.

``--profile DIR`` records every server process of the ``ours-*`` and
``floor-*`` phases over the measured window (py-spy for the gunicorn and
background workers, perf for Redis) into ``DIR/<system>-<clients>/``, with
a ``summary.md`` naming where the CPU goes, per move and per request
(``bench/peer/profile.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import requests

from bench import results
from bench.load import (
    GUNICORN_CONF,
    HOST,
    ROOT,
    answering,
    machine_ticks,
    process_tree,
    serving,
    stop,
)
from bench.peer import profile
from service.store.embedded import EmbeddedRedis, free_port

HERE = Path(__file__).resolve().parent
SYSTEMS: dict[str, tuple[str, str]] = {
    "bgio-memory": ("bgio", "memory"),
    "bgio-flatfile": ("bgio", "flatfile"),
    "ours-no": ("ours", "no"),
    "ours-everysec": ("ours", "everysec"),
    "ours-always": ("ours", "always"),
    "floor-no": ("floor", "no"),
    "floor-everysec": ("floor", "everysec"),
    "floor-always": ("floor", "always"),
}
# Run when --systems is not given: the floor in the mode issue 34 names.
DEFAULT_SYSTEMS = [s for s in SYSTEMS if s not in ("floor-no", "floor-always")]
# Ludothèque's processes, by kind; the CPU of each kind is reported per move.
# The floor has API workers, a gunicorn master and Redis.
OURS_KINDS = ("api_workers", "gunicorn_master", "bot_workers", "webhook_work", "redis", "serve")
# Moves in a two-player Dékal match: 16 rounds of two reveals and two takes,
# whatever the cards (engines/dekal, one manche); the floor plays as many.
FLOOR_MOVES = 64
NEED_NODE = "install Node.js and npm: apt-get install -y nodejs npm"
TICK = os.sysconf("SC_CLK_TCK")
METRIC = re.compile(
    r"^ludotheque_request_seconds_(sum|count)\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+-]+)$"
)
LABEL = re.compile(r'(\w+)="([^"]*)"')
# The routes a move's requests take, as /metrics names them.
REQUEST_KINDS = {
    ("POST", "/v1/games/dekal/matches"): "create",
    ("POST", "/v1/games/dekal/matches/<match_id>/actions"): "action",
    ("GET", "/v1/games/dekal/matches/<match_id>"): "view_wait",
}


def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# -- Node ---------------------------------------------------------------------
def node_ready() -> float | None:
    """Check that node and npm are here and ``node_modules`` installed (``npm
    ci`` when it is not); the seconds ``npm ci`` took, None when not run."""
    if not (shutil.which("node") and shutil.which("npm")):
        raise SystemExit(f"bench.peer needs Node.js: {NEED_NODE}")
    if (HERE / "node_modules" / "boardgame.io" / "package.json").exists():
        return None
    started = time.monotonic()
    done = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund"], cwd=HERE, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"npm ci failed in {HERE}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return time.monotonic() - started


# -- servers -------------------------------------------------------------------
def serving_on_a_free_port(
    stack: contextlib.ExitStack, kind: str, mode: str, tmp: Path, workers: int, rate_limits: bool
) -> tuple[int, Any]:
    """``serve_system`` on a free port, entered on ``stack``: another port
    if the one found free was taken before the server listened on it
    (EADDRINUSE, seen when tests run beside it), three times at most."""
    for attempt in range(3):
        port = free_port()
        try:
            return port, stack.enter_context(
                serve_system(kind, mode, port, tmp, workers, rate_limits)
            )
        except SystemExit as failed:
            if attempt == 2 or "EADDRINUSE" not in str(failed):
                raise
            out(f"  port {port} was taken meanwhile: another one")
    raise AssertionError("unreachable")


@contextlib.contextmanager
def bgio_server(storage: str, port: int, tmp: Path) -> Iterator[subprocess.Popen]:
    command = ["node", "server.js", "--port", str(port), "--storage", storage]
    if storage == "flatfile":
        command += ["--dir", str(tmp / "flatfile")]
    log = tmp / "bgio.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=HERE,
            env={**os.environ, "NODE_ENV": "production"},
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    try:
        answering(process, command, f"http://{HOST}:{port}/games", log, timeout=30)
        yield process
    finally:
        stop(process)


def ours_env(appendfsync: str, rate_limits: bool) -> dict[str, str]:
    """The environment of ``ludotheque serve``: its defaults, with its own
    embedded Redis (no REDIS_URL) fsyncing as asked."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["LUDOTHEQUE_APPENDFSYNC"] = appendfsync
    if not rate_limits:
        env["LUDOTHEQUE_RATE_LIMITS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@contextlib.contextmanager
def ours_server(
    appendfsync: str, port: int, tmp: Path, workers: int, rate_limits: bool
) -> Iterator[subprocess.Popen]:
    command = [sys.executable, "-m", "service.cli", "serve", "--port", str(port)]
    command += ["--workers", str(workers), "--data-dir", str(tmp / "data")]
    env = ours_env(appendfsync, rate_limits)
    with serving(command, env, port, "/readyz", tmp / "serve.log", workers) as process:
        yield process


@contextlib.contextmanager
def floor_server(appendfsync: str, port: int, tmp: Path, workers: int) -> Iterator[list[int]]:
    """``bench/baseline_app.py`` under gunicorn with the service's
    configuration file and ``workers`` workers, beside a private Redis with
    an append-only file fsynced as ``appendfsync`` says, as ``ludotheque
    serve`` starts its own; the pids of both, for their CPU."""
    redis_server = EmbeddedRedis(
        tmp / "data", appendfsync=appendfsync, server=os.environ.get("LUDOTHEQUE_REDIS_SERVER")
    )
    with redis_server as url:
        assert redis_server.process is not None
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env.update(
            REDIS_URL=url,
            LUDOTHEQUE_BIND=f"{HOST}:{port}",
            LUDOTHEQUE_WORKERS=str(workers),
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])),
        )
        command = [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONF)]
        command.append("bench.baseline_app:create_app()")
        with serving(command, env, port, "/floor/0", tmp / "floor.log", workers) as process:
            yield [process.pid, redis_server.process.pid]


@contextlib.contextmanager
def serve_system(
    kind: str, mode: str, port: int, tmp: Path, workers: int, rate_limits: bool
) -> Iterator[list[int]]:
    """A system's server for the block: the pids whose process trees are its."""
    if kind == "floor":
        with floor_server(mode, port, tmp, workers) as roots:
            yield roots
        return
    server = (
        bgio_server(mode, port, tmp)
        if kind == "bgio"
        else ours_server(mode, port, tmp, workers, rate_limits)
    )
    with server as process:
        yield [process.pid]


def settle(roots: list[int], timeout: float = 30) -> None:
    """Wait until every process under ``roots`` is about idle (the bot
    workers and Redis boot beside gunicorn)."""
    deadline = time.monotonic() + timeout
    last = -1.0
    while time.monotonic() < deadline:
        used = sum(ticks(pid)[0] for root in roots for pid in process_tree(root)) / TICK
        if 0 <= used - last < 0.1:
            return
        last = used
        time.sleep(0.5)


# -- CPU, by process kind ---------------------------------------------------------
def ticks(pid: int, tid: int | None = None) -> tuple[int, bytes]:
    """(utime + stime ticks, command line) of a process (or one of its threads)."""
    try:
        where = f"/proc/{pid}" + (f"/task/{tid}" if tid else "")
        fields = Path(f"{where}/stat").read_text().rpartition(")")[2].split()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        return int(fields[11]) + int(fields[12]), cmdline
    except (OSError, IndexError, ValueError):
        return 0, b""


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def kind_of(pid: int, root: int, cmdline: bytes, system: str) -> str:
    if system == "bgio":
        return "node"
    if pid == root and system == "ours":
        return "serve"
    if b"redis-server" in cmdline or b"valkey-server" in cmdline:
        return "redis"
    if b"gunicorn" in cmdline:
        master = b"gunicorn" in ticks(parent(pid))[1]
        return "api_workers" if master else "gunicorn_master"
    if b"service.cli\x00worker" in cmdline:
        return "background"
    return "other"


def snapshot(roots: list[int], system: str) -> dict[int, tuple[str, int, int]]:
    """Every process under ``roots``: (kind, CPU ticks, ticks of its main
    thread). A background worker's main thread plays the bots' turns; its
    other threads deliver webhooks (``service/background/worker.py``)."""
    found = {}
    for root in roots:
        for pid in process_tree(root):
            used, cmdline = ticks(pid)
            kind = kind_of(pid, root, cmdline, system)
            main = ticks(pid, pid)[0] if kind == "background" else used
            found[pid] = (kind, used, main)
    return found


def cpu_by_kind(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds each kind used between two snapshots (a process started
    in between counts from 0)."""
    used: dict[str, float] = {}
    for pid, (kind, total, main) in after.items():
        _, total0, main0 = before.get(pid, (kind, 0, 0))
        if kind == "background":
            used["bot_workers"] = used.get("bot_workers", 0) + (main - main0) / TICK
            extra = (total - total0) - (main - main0)
            used["webhook_work"] = used.get("webhook_work", 0) + extra / TICK
        else:
            used[kind] = used.get(kind, 0) + (total - total0) / TICK
    return used


def machine_busy() -> tuple[int, int]:
    """(busy, all) CPU ticks of the machine so far."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        t = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
        return sum(t) - t[3] - t[4], sum(t)
    return 0, 0


# -- /metrics: server time per request kind -----------------------------------------
def route_times(port: int) -> dict[str, tuple[float, float]]:
    """(seconds, count) of the requests of each kind so far, from /metrics."""
    try:
        text = requests.get(f"http://{HOST}:{port}/metrics", timeout=10).text
    except requests.RequestException:
        return {}
    found: dict[str, list[float]] = {}
    for line in text.splitlines():
        match = METRIC.match(line)
        if not match:
            continue
        labels = dict(LABEL.findall(match["labels"]))
        kind = REQUEST_KINDS.get((labels.get("method", ""), labels.get("route", "")))
        if kind is None:
            continue
        entry = found.setdefault(kind, [0.0, 0.0])
        entry[0 if match[1] == "sum" else 1] += float(match["value"])
    return {kind: (v[0], v[1]) for kind, v in found.items()}


# -- a phase -----------------------------------------------------------------------
def run_client(
    system: str,
    port: int,
    clients: int,
    warmup: float,
    seconds: float,
    addresses: int,
    on_start: Callable[[], None],
    on_end: Callable[[], None],
) -> dict[str, Any]:
    command = ["node", "client.js", "--system", system, "--port", str(port)]
    command += ["--clients", str(clients), "--warmup", str(warmup), "--seconds", str(seconds)]
    command += ["--addresses", str(addresses), "--moves", str(FLOOR_MOVES)]
    client = subprocess.Popen(
        command, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    found: dict[str, Any] | None = None
    try:
        assert client.stdout is not None
        for line in client.stdout:
            if line.startswith("measuring"):
                on_start()
            elif line.startswith("measured"):
                on_end()
            elif line.startswith("result "):
                found = orjson.loads(line[7:])
        client.wait(timeout=60)
    finally:
        stop(client)
    if found is None:
        error = client.stderr.read() if client.stderr else ""
        raise SystemExit(f"the load client gave no result:\n{error[-3000:]}")
    return found


def phase(
    system: str, roots: list[int], port: int, clients: int, args: argparse.Namespace
) -> dict[str, Any]:
    kind = SYSTEMS[system][0]
    marks: dict[str, Any] = {}
    recording: profile.Recording | None = None

    def start() -> None:
        nonlocal recording
        if kind == "ours":
            marks["routes"] = route_times(port)
        marks["cpu"] = snapshot(roots, kind)
        marks["machine"], marks["stolen"] = machine_busy(), machine_ticks()
        marks["t"] = time.monotonic()
        if args.profile and kind in ("ours", "floor"):
            folder = profile.phase_folder(args.profile, system, clients, args.round)
            recording = profile.Recording(folder, profile.targets_of(marks["cpu"]), args.seconds)
            recording.start()

    def end() -> None:
        if recording is not None:
            recording.stop()
        marks["cpu_end"] = snapshot(roots, kind)
        marks["machine_end"], marks["stolen_end"] = machine_busy(), machine_ticks()
        marks["t_end"] = time.monotonic()
        if kind == "ours":
            marks["routes_end"] = route_times(port)

    played = run_client(kind, port, clients, args.warmup, args.seconds, args.addresses, start, end)
    recorded = recording.finish() if recording is not None else None
    wall = marks["t_end"] - marks["t"]
    cpu = cpu_by_kind(marks["cpu"], marks["cpu_end"])
    moves = played["moves"]
    busy = marks["machine_end"][0] - marks["machine"][0]
    total = marks["machine_end"][1] - marks["machine"][1]
    steal = marks["stolen_end"][1] - marks["stolen"][1]
    figures: dict[str, Any] = {
        "system": system,
        "clients": clients,
        "seconds": round(wall, 2),
        "moves": moves,
        "moves_per_s": played["moves_per_s"],
        "move_latency_ms": played["move_latency_ms"],
        "handoff_ms": played["handoff_ms"],
        "server_cpu_ms_per_move": round(sum(cpu.values()) / moves * 1000, 3) if moves else None,
        "cpu_ms_per_move": {
            k: round(v / moves * 1000, 3) if moves else None for k, v in sorted(cpu.items())
        },
        "server_cpu_cores": round(sum(cpu.values()) / wall, 3),
        "client_cpu_cores": round(played["client_cpu_s"] / wall, 3),
        # the machine's busy cores over the window: with the server's and the
        # client's, what else ran on it (other work on a shared machine)
        "machine_busy_cores": round(busy / total * (os.cpu_count() or 1), 2) if total else None,
        "stolen": round(steal / total, 4) if total else None,
        "requests_per_move": {
            k: round(n / moves, 3) if moves else None
            for k, n in sorted(played["requests"].items())
        },
        "errors": played["errors"],
        "matches_started": played["matches_started"],
        "matches_finished": played["matches_finished"],
    }
    if kind == "ours":
        before, after = marks.get("routes", {}), marks.get("routes_end", {})
        figures["server_time_per_request_kind"] = {
            k: {
                "requests": int(after[k][1] - before.get(k, (0, 0))[1]),
                "mean_ms": round(
                    (after[k][0] - before.get(k, (0, 0))[0])
                    / max(1, after[k][1] - before.get(k, (0, 0))[1])
                    * 1000,
                    2,
                ),
            }
            for k in sorted(after)
            if after[k][1] > before.get(k, (0, 0))[1]
        }
    if recording is not None and recorded is not None:
        figures["round"] = args.round
        basis = profile.basis_of_phase(figures)
        figures["profile"] = str(profile.write_summary(recording.folder, basis, recorded))
    return figures


# -- reporting ------------------------------------------------------------------
def span(values: list[float | None], digits: int = 0) -> str:
    found = [v for v in values if v is not None]
    if not found:
        return "-"
    low, high = (f"{{:,.{digits}f}}".format(v) for v in (min(found), max(found)))
    return low if low == high else f"{low}–{high}"


def summarize(phases: list[dict[str, Any]], systems: list[str], counts: list[int]) -> dict:
    summary: dict[str, Any] = {}
    for system in systems:
        for clients in counts:
            mine = [p for p in phases if p["system"] == system and p["clients"] == clients]
            if not mine:
                continue
            kinds = sorted({k for p in mine for k in p["cpu_ms_per_move"]})

            def values(*path: str, among: list[dict[str, Any]] = mine) -> list[Any]:
                found = []
                for p in among:
                    value: Any = p
                    for key in path:
                        value = value.get(key) if isinstance(value, dict) else None
                    found.append(value)
                return found

            summary.setdefault(system, {})[str(clients)] = {
                "rounds": len(mine),
                "moves_per_s": values("moves_per_s"),
                "server_cpu_ms_per_move": values("server_cpu_ms_per_move"),
                "cpu_ms_per_move": {k: values("cpu_ms_per_move", k) for k in kinds},
                "move_latency_p50_ms": values("move_latency_ms", "p50"),
                "move_latency_p99_ms": values("move_latency_ms", "p99"),
                "handoff_p50_ms": values("handoff_ms", "p50"),
                "handoff_p99_ms": values("handoff_ms", "p99"),
                "handoff_over_500ms": values("handoff_ms", "over_500ms"),
                "errors": sum(sum(p["errors"].values()) for p in mine),
            }
    return summary


def report(summary: dict[str, Any], counts: list[int]) -> None:
    out("\nranges over the rounds (min–max); CPU: every server process, per move")
    head = f"{'system':15} {'clients':>7} {'moves/s':>13} {'CPU ms/move':>13}"
    head += f" {'move p50 ms':>13} {'move p99 ms':>13} {'handoff p50':>13} {'handoff p99':>13}"
    head += f" {'>500ms':>13} {'errors':>6}"
    out(head)
    for system, by_count in summary.items():
        for clients in counts:
            s = by_count.get(str(clients))
            if s is None:
                continue
            share = [None if v is None else v * 100 for v in s["handoff_over_500ms"]]
            out(
                f"{system:15} {clients:7d} {span(s['moves_per_s']):>13} "
                f"{span(s['server_cpu_ms_per_move'], 2):>13} "
                f"{span(s['move_latency_p50_ms'], 1):>13} {span(s['move_latency_p99_ms'], 1):>13} "
                f"{span(s['handoff_p50_ms'], 1):>13} {span(s['handoff_p99_ms'], 1):>13} "
                f"{span(share, 1) + ' %':>13} {s['errors']:6d}"
            )
    ours = {k: v for k, v in summary.items() if SYSTEMS[k][0] in ("ours", "floor")}
    if ours:
        out("\nCPU per move by process kind, Ludothèque and its floor (ms, min–max, rounds)")
        out(f"{'system':15} {'clients':>7} " + " ".join(f"{k:>15}" for k in OURS_KINDS))
        for system, by_count in ours.items():
            for clients in counts:
                s = by_count.get(str(clients))
                if s is None:
                    continue
                cells = [span(s["cpu_ms_per_move"].get(k, []), 3) for k in OURS_KINDS]
                out(f"{system:15} {clients:7d} " + " ".join(f"{c:>15}" for c in cells))
    ratios = floor_ratios(summary, counts)
    if ratios:
        out("\nserver CPU per move as a multiple of another system's, round by round (min–max)")
        out(f"{'':33} {'clients':>7} {'ratio':>13}")
        for (upper, lower, clients), values in ratios.items():
            out(f"{upper + ' / ' + lower:33} {clients:7d} {span(values, 2):>13}")


def ratios_by_pair(
    ratios: dict[tuple[str, str, int], list[float | None]],
) -> dict[str, dict[str, list[float | None]]]:
    """``{"floor-everysec / bgio-memory": {"16": [per round], ...}, ...}``"""
    found: dict[str, dict[str, list[float | None]]] = {}
    for (upper, lower, clients), values in ratios.items():
        found.setdefault(f"{upper} / {lower}", {})[str(clients)] = values
    return found


def floor_ratios(
    summary: dict[str, Any], counts: list[int]
) -> dict[tuple[str, str, int], list[float | None]]:
    """Each floor against boardgame.io in memory, and each Ludothèque mode
    against its floor: server CPU per move, the ratio of the same round's
    phases (the systems alternate within a round)."""
    pairs = [(f, "bgio-memory") for f in summary if SYSTEMS[f][0] == "floor"]
    pairs += [
        (o, "floor-" + SYSTEMS[o][1])
        for o in summary
        if SYSTEMS[o][0] == "ours" and "floor-" + SYSTEMS[o][1] in summary
    ]
    found: dict[tuple[str, str, int], list[float | None]] = {}
    for upper, lower in pairs:
        if lower not in summary:
            continue
        for clients in counts:
            a = summary[upper].get(str(clients), {}).get("server_cpu_ms_per_move", [])
            b = summary[lower].get(str(clients), {}).get("server_cpu_ms_per_move", [])
            if a and b:
                found[(upper, lower, clients)] = [
                    round(x / y, 3) if x and y else None for x, y in zip(a, b, strict=False)
                ]
    return found


def report_phase(p: dict[str, Any]) -> None:
    lat, hand = p["move_latency_ms"], p["handoff_ms"]
    out(
        f"  {p['system']:14} {p['clients']:3d} clients: {p['moves_per_s']:8.1f} moves/s, "
        f"CPU {p['server_cpu_ms_per_move']} ms/move, move p50/p99 {lat['p50']}/{lat['p99']} ms, "
        f"handoff p50/p99 {hand['p50']}/{hand['p99']} ms ({hand['over_500ms']} over 500 ms), "
        f"machine busy {p['machine_busy_cores']} cores (server {p['server_cpu_cores']}, "
        f"client {p['client_cpu_cores']})"
    )
    per_move = ", ".join(f"{k} {v}" for k, v in p["requests_per_move"].items())
    by_kind = ", ".join(f"{k} {v}" for k, v in p["cpu_ms_per_move"].items() if v)
    if "server_time_per_request_kind" in p:
        kinds = ", ".join(
            f"{k} {v['requests']} × {v['mean_ms']} ms"
            for k, v in p["server_time_per_request_kind"].items()
        )
        out(f"    requests per move: {per_move}; server time per request (/metrics): {kinds}")
    elif SYSTEMS[p["system"]][0] == "floor":
        out(f"    requests per move: {per_move}; CPU ms per move: {by_kind}")
    if p["errors"]:
        out(f"    errors: {p['errors']}")


# -- main -----------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", default="16,64", help="seats playing at once, per phase")
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the systems")
    parser.add_argument("--seconds", type=float, default=10, help="measured seconds per phase")
    parser.add_argument("--warmup", type=float, help="seconds before measuring (default S/5, ≤3)")
    parser.add_argument(
        "--systems", default=",".join(DEFAULT_SYSTEMS), help="among " + ",".join(SYSTEMS)
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="gunicorn workers (Ludothèque's, the floor's)"
    )
    parser.add_argument(
        "--rate-limits",
        choices=("on", "off"),
        default="on",
        help="on: Ludothèque's rate limits and quotas as configured by default; "
        "off: LUDOTHEQUE_RATE_LIMITS=0",
    )
    parser.add_argument(
        "--addresses",
        type=int,
        default=250,
        help="loopback client addresses the matches are played from in turn (1-250)",
    )
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="record every server process of the ours-* and floor-* phases over the measured "
        "window (py-spy; Redis: perf) into DIR/<system>-<clients>/, with a summary.md each "
        "(bench/peer/profile.py)",
    )
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    systems = [s for s in args.systems.split(",") if s]
    if unknown := set(systems) - set(SYSTEMS):
        parser.error(f"unknown systems: {sorted(unknown)}")
    try:
        counts = [int(c) for c in args.clients.split(",") if c]
    except ValueError:
        parser.error("--clients takes numbers: 16,64")
    if not counts or any(c < 2 or c % 2 for c in counts):
        parser.error("--clients: even numbers (two-player matches)")
    if args.rounds < 1 or args.seconds <= 0 or args.workers < 1:
        parser.error("--rounds, --seconds and --workers must be positive")
    if not 1 <= args.addresses <= 250:
        parser.error("--addresses: 1 to 250")
    args.warmup = args.warmup if args.warmup is not None else min(3.0, args.seconds / 5)
    if args.profile and (reason := profile.cannot_profile()):
        raise SystemExit(f"--profile: {reason}")
    npm_ci_s = node_ready()
    rate_limits = args.rate_limits == "on"
    facts = results.machine()
    out(
        f"bench.peer: {facts['cpus']} CPUs ({facts['cpu']}), load average "
        f"{facts['load_average']}; node {node_version()}"
    )
    if npm_ci_s is not None:
        out(f"npm ci took {npm_ci_s:.1f} s")
    out(
        f"{','.join(map(str, counts))} clients, {args.rounds} rounds, {args.seconds:g} s "
        f"(after {args.warmup:g} s of warm-up) per phase; Ludothèque: {args.workers} workers; "
        + (
            f"rate limits on as configured by default (clients from {args.addresses} "
            "loopback addresses)"
            if rate_limits
            else "rate limits off (LUDOTHEQUE_RATE_LIMITS=0)"
        )
    )
    phases: list[dict[str, Any]] = []
    started = time.monotonic()
    for round_ in range(1, args.rounds + 1):
        out(f"round {round_}")
        args.round = round_
        for system in systems:
            kind, mode = SYSTEMS[system]
            with (
                tempfile.TemporaryDirectory(prefix="ludotheque-peer-") as tmp,
                contextlib.ExitStack() as stack,
            ):
                port, roots = serving_on_a_free_port(
                    stack, kind, mode, Path(tmp), args.workers, rate_limits
                )
                settle(roots)
                for clients in counts:
                    figures = phase(system, roots, port, clients, args)
                    figures["round"] = round_
                    phases.append(figures)
                    report_phase(figures)
                    if "profile" in figures:
                        out(f"    profile: {figures['profile']}")
    took = time.monotonic() - started
    summary = summarize(phases, systems, counts)
    report(summary, counts)
    out(f"\n{len(phases)} phases in {took:.0f} s")
    if args.json:
        document = {
            "config": {
                "clients": counts,
                "rounds": args.rounds,
                "seconds": args.seconds,
                "warmup": args.warmup,
                "systems": systems,
                "workers": args.workers,
                "players": 2,
                "floor_moves_per_match": FLOOR_MOVES,
                "rate_limits": (
                    f"on, as configured by default; clients from {args.addresses} loopback "
                    "addresses"
                    if rate_limits
                    else "off (LUDOTHEQUE_RATE_LIMITS=0)"
                ),
                "node": node_version(),
                "boardgame.io": "0.50.2",
            },
            "npm_ci_s": None if npm_ci_s is None else round(npm_ci_s, 1),
            "took_s": round(took),
            "summary": summary,
            "cpu_per_move_ratios": ratios_by_pair(floor_ratios(summary, counts)),
            "phases": phases,
        }
        out(f"wrote {results.write(args.json, 'peer', argv, document)}")
    return 0


def node_version() -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        return subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    return "?"


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("peer")))
