"""Where the server's CPU goes under ``bench.peer``'s load (issue 34, point 2).

``python -m bench.peer --profile DIR`` records every server process of each
``ours-*`` and ``floor-*`` phase over its measured window (not the warm-up):

- each gunicorn worker and each background worker (``python -m service.cli
  worker``) with ``py-spy record --gil --rate 200 --format raw
  --nonblocking``: only the samples that hold the GIL, i.e. CPU spent in
  Python (without ``--gil`` py-spy counts wall time, and loopback ``send``
  calls, which a saturated machine preempts, dominate falsely);
- Redis with ``perf record -F 499 -g``, kept as ``perf report --stdio
  --no-children --sort symbol``'s text.

The raw files go to ``DIR/<system>-<clients>/<kind>-<pid>.txt`` (round 2 and
later: ``DIR/<system>-<clients>-round<N>/``), with ``summary.md``: for each
process kind, its samples (a) by category of the innermost frame that names
one, (b) under the key frames (cumulative), (c) the 25 functions (Redis:
symbols) with the most own time; every share also in µs of CPU per move,
the kind's measured CPU per move times the share, and per request (over the
phase's requests per move). ``profile.json`` beside it keeps what the summary
is made from: ``python -m bench.peer.profile summary DIR/<phase>`` writes it
again (after a change of the categories, say).

Two more costs, outside the load (``ludotheque serve`` as ``ours-*`` runs it):

    python -m bench.peer.profile idle --seconds 10 [--profile DIR]
    python -m bench.peer.profile followers --followers 1000 --seconds 10

``idle``: CPU per second of each process, no load at all (the background
workers poll their queues). ``followers``: the CPU per open follower and per
second, N event streams (spectators) then N long polls (one seat's, waiting
for the other's move) open on one idle match, against the same server with
none; and the CPU to open one. The CPU per delivered event is
``python -m bench.streams``' ``cpu_us_per_delivery``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import math
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis
import requests

PY_SPY_RATE = 200
PERF_HZ = 499
TOP = 25
# the kinds of process recorded, as bench.peer's CPU figures name them
API, BACKGROUND, REDIS = "api_workers", "background", "redis"
KIND_TITLES = {
    API: "API workers (gunicorn workers)",
    BACKGROUND: "background workers (`service.cli worker`: bot turns, webhook deliveries)",
    REDIS: "Redis",
}

# -- categories: the innermost frame of a sample that one of these names ---------
# (name, file pattern, function pattern or None), tried in order on each frame
# from the leaf to the root; the first frame some rule names gives the sample
# its category. Standard library frames (logging, json, threading...) name
# none: they count where their caller does.
CATEGORY_RULES: list[tuple[str, str, str | None]] = [
    ("gevent: sockets, polls", r"^gevent/(_socket\w*|socket|select|_ssl\w*)\.py$", None),
    ("gevent: hub, waits, switches", r"^(gevent|greenlet)/", None),
    (
        "gunicorn: parsing requests",
        r"^gunicorn/http/(message|parser|unreader|body|errors)\.py$",
        None,
    ),
    ("gunicorn: parsing requests", r"^gunicorn/http/wsgi\.py$", r"environ|^create$"),
    # service/server/wire.py: our gunicorn Response (the head sent with the body)
    ("gunicorn: parsing requests", r"^service/server/wire\.py$", r"environ|^create$"),
    ("gunicorn: writing answers", r"^(gunicorn/(http/wsgi|util)|service/server/wire)\.py$", None),
    ("gunicorn: worker loop, other", r"^gunicorn/", None),
    ("werkzeug/Flask: routing", r"^werkzeug/routing/", None),
    ("werkzeug/Flask: routing", r"^flask/", r"url_adapter|match_request|routing_exception"),
    ("werkzeug/Flask: request context", r"^(flask/(ctx|globals)|werkzeug/local)\.py$", None),
    (
        "werkzeug/Flask: request, response objects",
        r"^(flask/wrappers\.py|flask/json/|werkzeug/(wrappers|sansio|datastructures)/"
        r"|werkzeug/(http|urls|datastructures|utils|wsgi|_internal)\.py)",
        None,
    ),
    ("werkzeug/Flask: dispatch, other", r"^(flask|werkzeug)/", None),
    (
        "flask-smorest, webargs, marshmallow",
        r"^(flask_smorest|webargs|marshmallow|apispec)/|^service/http/arguments\.py$",
        None,
    ),
    (
        "request hooks: access log, metrics",
        r"^(service/(observability|metrics)\.py|prometheus_client/|pythonjsonlogger/)",
        None,
    ),
    (
        "request hooks: rate limits, quotas",
        r"^service/(http/limits|store/(counters|quotas))\.py$",
        None,
    ),
    (
        "request hooks: CORS, caching, hardening",
        r"^service/http/(cors|caching|hardening)\.py$",
        None,
    ),
    ("token checks", r"^service/(domain/(tokens|access|signing)|http/bearer)\.py$", None),
    ("redis-py: parsing answers", r"^(redis/_parsers/|hiredis)", None),
    ("redis-py: parsing answers", r"^redis/", r"read_response"),
    ("redis-py: pipelines", r"^redis/", r"^Pipeline\."),
    ("redis-py: commands, connections", r"^redis/", None),
    (
        "push hub, long polls (service/live/, follower caps)",
        r"^service/(live/|store/(allowances|wakeups)\.py)",
        None,
    ),
    ("view, legal actions (views.py, engines/)", r"^(service/domain/views\.py|engines/)", None),
    (
        "matches: load, commit (commits.py, matches.py, store/matches.py)",
        r"^service/(domain/(commits|matches)|store/matches)\.py$",
        None,
    ),
    (
        "background workers' loops (service/background/, queues)",
        r"^service/(background/|store/(scheduling|deliveries)\.py)",
        None,
    ),
    ("the floor's app (bench/baseline_app.py)", r"^bench/baseline_app\.py$", None),
    ("service: other", r"^service/", None),
]
OTHER = "other (interpreter, standard library alone)"
CATEGORIES = [*dict.fromkeys(name for name, _, _ in CATEGORY_RULES), OTHER]
_RULES = [
    (name, re.compile(path), re.compile(func) if func else None)
    for name, path, func in CATEGORY_RULES
]


@dataclass(frozen=True)
class Key:
    """A key frame: the samples with it anywhere on the stack (cumulative)."""

    label: str
    pattern: str  # on "function (file" of each frame
    kinds: tuple[str, ...]  # the process kinds it is shown for
    systems: tuple[str, ...] = ("ours", "floor")
    request: str | None = None  # per request of this kind rather than of any

    @property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


KEYS = [
    Key("gunicorn's handle_request (a whole request)", r"handle_request \(gunicorn/", (API,)),
    Key("Flask.wsgi_app", r"^Flask\.wsgi_app \(flask/", (API,)),
    Key("before_request hooks (Flask.preprocess_request)", r"^Flask\.preprocess_request ", (API,)),
    Key("after_request hooks (Flask.process_response)", r"^Flask\.process_response ", (API,)),
    Key(
        "the action route (Actions.post)",
        r"\bActions\.post \(service/http/actions\.py",
        (API,),
        ("ours",),
        "action",
    ),
    Key(
        "the view route (MatchResource.get)",
        r"\bMatchResource\.get \(service/http/matches\.py",
        (API,),
        ("ours",),
        "view_wait",
    ),
    Key(
        "  its long poll (turns.turn_of)",
        r"^turn_of \(service/live/turns\.py",
        (API,),
        ("ours",),
        "view_wait",
    ),
    Key(
        "  its wait (turns._wait)",
        r"^_wait \(service/live/turns\.py",
        (API,),
        ("ours",),
        "view_wait",
    ),
    Key(
        "the create route (MatchCollection.post)",
        r"\bMatchCollection\.post \(service/http/matches\.py",
        (API,),
        ("ours",),
        "create",
    ),
    Key("Store.load", r"^Store\.load \(service/store/matches\.py", (API, BACKGROUND), ("ours",)),
    Key(
        "Store.commit", r"^Store\.commit \(service/store/matches\.py", (API, BACKGROUND), ("ours",)
    ),
    Key("Allowances.hold", r"^Allowances\.hold \(service/live/", (API,), ("ours",)),
    Key("Allowances.release", r"^Allowances\.release \(service/live/", (API,), ("ours",)),
    Key(
        "Hub.follow, Hub.unfollow",
        r"^Hub\.(follow|unfollow) \(service/live/hub",
        (API,),
        ("ours",),
    ),
    Key("hub thread: Listener.listen", r"^Listener\.listen \(service/live/hub", (API,), ("ours",)),
    Key("hub thread: Hub._read_loop", r"^Hub\._read_loop \(service/live/hub", (API,), ("ours",)),
    Key("hub thread: Hub._check_loop", r"^Hub\._check_loop \(service/live/hub", (API,), ("ours",)),
    Key("the engine (engines/)", r"\(engines/", (API, BACKGROUND), ("ours",)),
    Key(
        "floor: the action (floor_action)", r"floor_action \(bench/", (API,), ("floor",), "action"
    ),
    Key(
        "floor: the view, long poll (floor_view)",
        r"floor_view \(bench/",
        (API,),
        ("floor",),
        "view_wait",
    ),
    Key("floor: its pub/sub listener (Waiters.listen)", r"^Waiters\.listen ", (API,), ("floor",)),
    Key("redis-py, all of it", r"\(redis/", (API, BACKGROUND)),
    Key("socket sends (gevent)", r"^\w+\.(send|sendall|sendto)\w* \(gevent/", (API,)),
    Key("socket receives (gevent)", r"^\w+\.recv\w* \(gevent/", (API,)),
    Key("logging (the logging package)", r"\(logging/", (API, BACKGROUND)),
    Key("bot turns: Worker.run_once", r"^Worker\.run_once \(service/background/", (BACKGROUND,)),
    Key("  a turn played (Worker.play)", r"^Worker\.play \(service/background/", (BACKGROUND,)),
    Key(
        "webhooks: Deliverer.run_once",
        r"^Deliverer\.run_once \(service/background/",
        (BACKGROUND,),
    ),
    Key(
        "the queues' claims (turns, webhook lanes)",
        r"^\w+\.claim \(service/(background|store)/",
        (BACKGROUND,),
    ),
]

# -- Redis (perf): the innermost kernel frame that one of these names ---------------
REDIS_RULES: list[tuple[str, str]] = [
    (
        "kernel: socket writes (TCP send, loopback delivery)",
        r"^(tcp_sendmsg|sock_write_iter|sock_sendmsg|tcp_write_xmit|__sys_sendto)",
    ),
    ("kernel: socket reads", r"^(tcp_recvmsg|sock_read_iter|sock_recvmsg|__sys_recvfrom)"),
    (
        "kernel: AOF fsync",
        r"^(ext4_sync_file|vfs_fsync_range|__x64_sys_fsync|__x64_sys_fdatasync|jbd2_)",
    ),
    (
        "kernel: AOF writes",
        r"^(ext4_buffered_write_iter|ext4_file_write_iter|generic_perform_write)",
    ),
    (
        "kernel: epoll (waiting, being woken)",
        r"^(do_epoll_wait|ep_poll|ep_send_events|__x64_sys_epoll)",
    ),
    ("kernel: other system calls", r"^(do_syscall_64|entry_SYSCALL)"),
]
REDIS_USER = [
    (
        "user: Lua (interpreter, scripts)",
        r"^(lua|eval|script|fcall)",  # Lua's own functions, Redis's glue
    ),
]
REDIS_USER_OTHER = "user: Redis (commands, protocol, event loop)"
REDIS_LIBS = "user: libc, jemalloc"
REDIS_KERNEL_OTHER = "kernel: interrupts, scheduling, other"
REDIS_CATEGORIES = (
    [n for n, _ in REDIS_USER]
    + [REDIS_USER_OTHER, REDIS_LIBS]
    + [n for n, _ in REDIS_RULES]
    + [REDIS_KERNEL_OTHER]
)


# == recording ======================================================================
def py_spy() -> str | None:
    """py-spy on PATH, else beside this Python (a virtual environment's bin/)."""
    found = shutil.which("py-spy")
    if found:
        return found
    beside = Path(sys.executable).with_name("py-spy")
    return str(beside) if beside.exists() else None


def cannot_profile() -> str | None:
    """Why py-spy or perf cannot record this machine's processes (missing,
    ptrace or perf_event_open not permitted...), or None when both can: each
    is tried on a Python process started here."""
    spy = py_spy()
    if spy is None:
        return "py-spy is not installed (pip install py-spy)"
    if not shutil.which("perf"):
        return "perf is not installed (apt-get install linux-perf)"
    target = subprocess.Popen(
        [sys.executable, "-c", "import time\nwhile True: sum(range(1000)); time.sleep(0.001)"]
    )
    try:
        time.sleep(0.3)
        reason = None
        for _ in range(10):  # the interpreter may not be up yet
            done = subprocess.run(
                [spy, "dump", "--pid", str(target.pid), "--nonblocking"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode == 0:
                reason = None
                break
            reason = "py-spy cannot attach: " + gist(done.stderr or done.stdout)
            if "ermission" in reason or "ptrace" in reason.lower():
                reason += " (ptrace not permitted: run as root, or with CAP_SYS_PTRACE)"
                break
            time.sleep(0.3)
        if reason:
            return reason
        with tempfile.TemporaryDirectory() as tmp:
            record = ["perf", "record", "-F", "99", "-g", "-p", str(target.pid)]
            done = subprocess.run(
                [*record, "-o", "perf.data", "--", "sleep", "0.3"],
                cwd=tmp,
                capture_output=True,
                text=True,
                timeout=30,
            )
            if done.returncode != 0 or not (Path(tmp) / "perf.data").exists():
                return (
                    "perf cannot record: "
                    + gist(done.stderr or done.stdout)
                    + " (perf_event_open not permitted: kernel.perf_event_paranoid, "
                    "CAP_PERFMON, or a container's seccomp profile)"
                )
        return None
    finally:
        target.kill()
        target.wait()


def gist(text: str) -> str:
    """An error's gist: its first two lines that say something."""
    lines = [line.strip() for line in text.splitlines() if line.strip(" :\t")]
    return " ".join(lines[:2])[:300] or "no output"


@dataclass
class Spy:
    kind: str
    pid: int
    raw: Path
    process: subprocess.Popen | None = None
    data: Path | None = None  # perf's
    cpu_s: float = 0.0  # the profiler's own CPU
    samples: int = 0
    errors: int | None = None  # py-spy's failed samples (--nonblocking reads)
    failed: str | None = None


class Recording:
    """The profilers of one phase: started when its window opens, stopped
    (SIGINT: they write what they have) when it closes."""

    def __init__(self, folder: Path, targets: Iterable[tuple[str, int]], seconds: float) -> None:
        self.folder = folder
        self.seconds = seconds
        self.spies = [
            Spy(kind, pid, folder / f"{'redis' if kind == REDIS else kind}-{pid}.txt")
            for kind, pid in targets
        ]
        self.started = self.stopped = 0.0

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        spy_binary = py_spy()
        for spy in self.spies:
            if spy.kind == REDIS:
                spy.data = spy.raw.with_suffix(".perf.data")
                command = ["perf", "record", "-F", str(PERF_HZ), "-g", "-p", str(spy.pid)]
                command += ["-o", str(spy.data), "--", "sleep", f"{self.seconds:g}"]
            else:
                assert spy_binary is not None
                command = [spy_binary, "record", "--gil", "--rate", str(PY_SPY_RATE)]
                command += ["--format", "raw", "--nonblocking"]
                command += ["--duration", str(math.ceil(self.seconds)), "--pid", str(spy.pid)]
                command += ["--output", str(spy.raw)]
            spy.process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                start_new_session=True,
            )
        self.started = time.monotonic()

    def stop(self) -> None:
        """The window has closed: stop whoever still records."""
        self.stopped = time.monotonic()
        for spy in self.spies:
            # not ``poll()``: ``reap`` waits for them, for their CPU
            if spy.process is not None and spy.process.returncode is None:
                kill_group(spy.process, signal.SIGINT)

    def finish(self) -> dict[str, Any]:
        """Wait for the profilers, make Redis's reports; what was recorded."""
        if not self.stopped:
            self.stop()
        outputs = {}
        for spy in self.spies:
            if spy.process is not None:
                spy.cpu_s, outputs[spy.pid] = reap(spy.process, 60)
        for spy in self.spies:
            output = outputs.get(spy.pid, "")
            if spy.kind == REDIS:
                self._perf_report(spy, output)
            else:
                found = re.search(r"Samples: (\d+) Errors: (\d+)", output)
                if found:
                    spy.samples, spy.errors = int(found[1]), int(found[2])
                if not spy.raw.exists():
                    spy.failed = "py-spy wrote nothing: " + gist(output)
        return {
            "seconds": self.seconds,
            "recorded_s": round(self.stopped - self.started, 2),
            "profilers_cpu_s": round(sum(s.cpu_s for s in self.spies), 2),
            "py_spy": f"py-spy record --gil --rate {PY_SPY_RATE} --format raw --nonblocking",
            "perf": f"perf record -F {PERF_HZ} -g",
            "processes": [
                {
                    "kind": s.kind,
                    "pid": s.pid,
                    "file": s.raw.name,
                    "samples": s.samples,
                    "errors": s.errors,
                    "profiler_cpu_s": round(s.cpu_s, 2),
                    "failed": s.failed,
                }
                for s in self.spies
            ],
        }

    def _perf_report(self, spy: Spy, output: str) -> None:
        if spy.data is None or not spy.data.exists():
            spy.failed = "perf wrote nothing: " + gist(output)
            return
        top_symbols = ["--stdio", "--no-children", "--sort", "symbol"]
        report = subprocess.run(
            ["perf", "report", "-i", str(spy.data), *top_symbols],
            capture_output=True,
            text=True,
            timeout=300,
        )
        spy.raw.write_text(report.stdout)
        script = subprocess.run(
            ["perf", "script", "-i", str(spy.data)], capture_output=True, text=True, timeout=300
        )
        collapsed = perf_collapsed(script.stdout)
        spy.raw.with_suffix(".collapsed").write_text(
            "".join(f"{';'.join(stack)} {n}\n" for stack, n in collapsed.items())
        )
        spy.samples = sum(collapsed.values())
        spy.data.unlink()  # the text keeps what the summary reads; perf.data is large


def reap(process: subprocess.Popen, timeout: float) -> tuple[float, str]:
    """Wait for ``process`` (SIGKILL after ``timeout``): its CPU seconds, its output."""
    killer = threading.Timer(timeout, lambda: kill_group(process, signal.SIGKILL))
    killer.start()
    try:
        assert process.stdout is not None
        output = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    return usage.ru_utime + usage.ru_stime, output


def kill_group(process: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def perf_collapsed(script: str) -> collections.Counter[tuple[str, ...]]:
    """``perf script``'s samples as collapsed stacks, root first; each frame
    ``symbol [k]`` (kernel) or ``symbol [dso]`` (user space)."""
    stacks: collections.Counter[tuple[str, ...]] = collections.Counter()
    frames: list[str] = []
    for line in [*script.splitlines(), ""]:
        if not line.strip():
            if frames:
                stacks[tuple(reversed(frames))] += 1
                frames = []
            continue
        if not line[0].isspace():
            continue  # a sample's header
        parts = line.strip().split(" ", 1)
        if len(parts) < 2:
            continue
        symbol, _, dso = parts[1].rpartition(" (")
        symbol = re.sub(r"\+0x[0-9a-f]+$", "", symbol)
        dso = dso.rstrip(")")
        where = "k" if "kernel" in dso else Path(dso).name
        frames.append(f"{symbol} [{where}]")
    return stacks


# == reading ===========================================================================
FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def read_collapsed(paths: Iterable[Path]) -> collections.Counter[tuple[str, ...]]:
    """Collapsed stacks (``a;b;c 12``, root first) of ``paths``, summed."""
    stacks: collections.Counter[tuple[str, ...]] = collections.Counter()
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            for line in path.read_text(errors="replace").splitlines():
                stack, _, count = line.rstrip().rpartition(" ")
                if count.isdigit() and stack:
                    stacks[tuple(stack.split(";"))] += int(count)
    return stacks


def split_frame(frame: str) -> tuple[str, str]:
    found = FRAME.match(frame)
    return (found["func"], found["file"]) if found else (frame, "")


def category_of(stack: tuple[str, ...]) -> str:
    for frame in reversed(stack):
        func, file = split_frame(frame)
        for name, path, pattern in _RULES:
            if path.search(file) and (pattern is None or pattern.search(func)):
                return name
    return OTHER


def function_of(frame: str) -> str:
    func, file = split_frame(frame)
    return f"{func} ({file})" if file else func


def redis_category(stack: tuple[str, ...]) -> str:
    leaf = stack[-1]
    if not leaf.endswith("[k]"):
        name = leaf.rsplit(" [", 1)[0]
        for category, pattern in REDIS_USER:
            if re.search(pattern, name):
                return category
        return (
            REDIS_LIBS if re.search(r"\[(libc|libjemalloc|libm|ld-)", leaf) else REDIS_USER_OTHER
        )
    for frame in reversed(stack):
        if frame.endswith("[k]"):
            name = frame[: -len(" [k]")]
            for category, pattern in REDIS_RULES:
                if re.search(pattern, name):
                    return category
    return REDIS_KERNEL_OTHER


@dataclass
class Shares:
    total: int = 0
    categories: collections.Counter[str] = field(default_factory=collections.Counter)
    keys: collections.Counter[str] = field(default_factory=collections.Counter)
    own: collections.Counter[str] = field(default_factory=collections.Counter)


def python_shares(stacks: collections.Counter[tuple[str, ...]]) -> Shares:
    shares = Shares()
    keys = [(key.label, key.compiled) for key in KEYS]
    for stack, n in stacks.items():
        shares.total += n
        shares.categories[category_of(stack)] += n
        shares.own[function_of(stack[-1])] += n
        for label, pattern in keys:
            if any(pattern.search(frame) for frame in stack):
                shares.keys[label] += n
    return shares


def redis_shares(stacks: collections.Counter[tuple[str, ...]]) -> Shares:
    shares = Shares()
    for stack, n in stacks.items():
        shares.total += n
        shares.categories[redis_category(stack)] += n
        shares.own[stack[-1]] += n
    return shares


# == the summary ======================================================================
def basis_of_phase(figures: dict[str, Any]) -> dict[str, Any]:
    """What a phase's shares are converted with: CPU per move of each kind
    profiled, requests per move by kind."""
    per_move = figures["cpu_ms_per_move"]
    cpu = {
        API: per_move.get("api_workers"),
        BACKGROUND: (
            (per_move.get("bot_workers") or 0) + (per_move.get("webhook_work") or 0)
            if "bot_workers" in per_move
            else None
        ),
        REDIS: per_move.get("redis"),
    }
    return {
        "unit": "move",
        "units": figures["moves"],
        "system": figures["system"],
        "clients": figures["clients"],
        "round": figures.get("round", 1),
        "seconds": figures["seconds"],
        "cpu_ms": cpu,
        "requests": figures.get("requests_per_move", {}),
        "figures": figures,
    }


def micro(us: float) -> str:
    return f"{us:,.0f}" if abs(us) >= 10 else f"{us:.1f}"


@dataclass
class Table:
    """The rows of one kind's tables: share, µs per unit, µs per request."""

    shares: Shares
    cpu_ms: float | None  # the kind's CPU per unit
    unit: str
    requests: float  # per unit, every kind

    def head(self, first: str) -> list[str]:
        if self.unit == "move":
            return [f"| {first} | share | µs/move | µs/request |", "|---|---:|---:|---:|"]
        return [f"| {first} | share | µs/{self.unit} |", "|---|---:|---:|"]

    def row(self, name: str, n: int, requests: float | None = None) -> str:
        share = n / self.shares.total
        cells = [name, f"{share * 100:.1f} %"]
        us = None if self.cpu_ms is None else share * self.cpu_ms * 1000
        cells.append("-" if us is None else micro(us))
        if self.unit == "move":
            per = requests if requests is not None else self.requests
            cells.append("-" if us is None or not per else micro(us / per))
        return "| " + " | ".join(cells) + " |"


def render(basis: dict[str, Any], recording: dict[str, Any], folder: Path) -> str:
    """summary.md: each kind's shares by category, under the key frames, and
    its top functions (Redis: symbols)."""
    unit = basis["unit"]
    requests = sum(v or 0 for v in basis["requests"].values())
    lines = [f"# Profile: {basis['system']}", ""]
    figures = basis.get("figures") or {}
    if unit == "move":
        lines[0] += f", {basis['clients']} clients (round {basis['round']})"
        by_kind = ", ".join(f"{k} {v}" for k, v in figures.get("cpu_ms_per_move", {}).items())
        lines += [
            f"Measured window {basis['seconds']} s: {basis['units']} moves "
            f"({figures.get('moves_per_s')} moves/s); server CPU "
            f"{figures.get('server_cpu_ms_per_move')} ms per move ({by_kind}); machine busy "
            f"{figures.get('machine_busy_cores')} cores (server "
            f"{figures.get('server_cpu_cores')}, client {figures.get('client_cpu_cores')}).",
            "Requests per move: "
            + ", ".join(f"{k} {v}" for k, v in basis["requests"].items())
            + f" ({requests:.3f} in all).",
        ]
    else:
        by_kind = ", ".join(
            f"{KIND_TITLES[k].split(' (')[0]} {v}" for k, v in basis["cpu_ms"].items()
        )
        lines.append(f"Measured {basis['seconds']} s, no moves; CPU ms per second: {by_kind}.")
    cores = recording["profilers_cpu_s"] / max(0.01, recording["recorded_s"])
    lines += [
        f"Recorded: `{recording['py_spy']}` of every gunicorn worker and background worker, "
        f"`{recording['perf']}` of Redis, for {recording['recorded_s']} s of the window; "
        f"the profilers' own CPU {recording['profilers_cpu_s']} s ({cores:.2f} cores).",
        "",
        f"A share is of the kind's samples; µs/{unit} is the share times the kind's measured "
        f"CPU per {unit}"
        + (
            "; µs/request divides that by the requests per move (a route's: by its kind's; "
            "any other: by every kind's)"
            if unit == "move"
            else ""
        )
        + ". py-spy `--gil` samples only time holding the GIL (Python running): the "
        "coverage line compares the samples with the kind's CPU, the rest being time "
        "without the GIL (system calls, C code that releases it) and samples lost.",
        "",
    ]
    for kind in (API, BACKGROUND, REDIS):
        mine = [p for p in recording["processes"] if p["kind"] == kind]
        if mine:
            lines += kind_section(kind, mine, basis, folder, requests)
    return "\n".join(lines)


def kind_section(
    kind: str, mine: list[dict[str, Any]], basis: dict[str, Any], folder: Path, requests: float
) -> list[str]:
    unit, cpu_ms = basis["unit"], basis["cpu_ms"].get(kind)
    files = [folder / p["file"] for p in mine]
    if kind == REDIS:
        shares, rate = (
            redis_shares(read_collapsed(f.with_suffix(".collapsed") for f in files)),
            PERF_HZ,
        )
    else:
        shares, rate = python_shares(read_collapsed(files)), PY_SPY_RATE
    cpu_text = f"{cpu_ms:.3f} ms CPU per {unit}" if cpu_ms is not None else "CPU unknown"
    sampled_s = shares.total / rate
    window_cpu = (cpu_ms or 0) * basis["units"] / 1000
    errors = [p["errors"] for p in mine if p.get("errors") is not None]
    line = (
        f"pids {', '.join(str(p['pid']) for p in mine)}: {shares.total} samples at {rate} Hz "
        f"({sampled_s:.2f} s) against {window_cpu:.2f} s of CPU in the window"
    )
    if window_cpu:
        line += f" (coverage {sampled_s / window_cpu:.0%})"
        if kind != REDIS and sampled_s > 1.1 * window_cpu:
            # runnable, holding the GIL, but waiting for a core: py-spy cannot
            # tell it from running, so the shares are of that time (they match
            # CPU shares in expectation: a preemption lands anywhere in the code)
            line += (
                ", over 100 %: the machine was busier than its cores, and a process "
                "waiting for one while holding the GIL is sampled too"
            )
    if errors:
        line += f"; py-spy's failed samples {sum(errors)}"
    line += "".join(f"; {p['file']}: {p['failed']}" for p in mine if p.get("failed"))
    lines = [f"## {KIND_TITLES[kind]}: {cpu_text}", "", line + ".", ""]
    if not shares.total:
        return [*lines, "No samples.", ""]
    table = Table(shares, cpu_ms, unit, requests)
    if kind == REDIS:
        lines += ["### By category (innermost kernel frame; user space by symbol)", ""]
        names = REDIS_CATEGORIES
    else:
        lines += ["### By category (innermost frame that names one)", ""]
        names = CATEGORIES
    lines += table.head("category")
    for name in sorted(names, key=lambda c: -shares.categories[c]):
        if shares.categories[name]:
            lines.append(table.row(name, shares.categories[name]))
    lines.append("")
    if kind != REDIS:
        system = basis["system"].split("-")[0]
        lines += ["### Key frames (cumulative: the samples under each)", ""]
        lines += table.head("frame")
        for key in KEYS:
            if kind in key.kinds and system in key.systems:
                per = basis["requests"].get(key.request) if key.request else None
                lines.append(table.row(key.label, shares.keys[key.label], per))
        lines.append("")
    title = "symbol" if kind == REDIS else "function"
    lines += [f"### Top {TOP} {title}s by own time", ""]
    lines += table.head(title)
    lines += [table.row(f"`{name}`", n) for name, n in shares.own.most_common(TOP)]
    return [*lines, ""]


def write_summary(folder: Path, basis: dict[str, Any], recording: dict[str, Any]) -> Path:
    (folder / "profile.json").write_bytes(
        orjson.dumps({"basis": basis, "recording": recording}, option=orjson.OPT_INDENT_2)
    )
    summary = folder / "summary.md"
    summary.write_text(render(basis, recording, folder))
    return summary


def rewrite_summary(folder: Path) -> Path:
    saved = orjson.loads((folder / "profile.json").read_bytes())
    summary = folder / "summary.md"
    summary.write_text(render(saved["basis"], saved["recording"], folder))
    return summary


def targets_of(snapshot: dict[int, tuple[str, int, int]]) -> list[tuple[str, int]]:
    """The processes to record, from ``bench.peer``'s snapshot: (kind, pid)."""
    kinds = {"api_workers": API, "background": BACKGROUND, "redis": REDIS}
    return sorted((kinds[kind], pid) for pid, (kind, _, _) in snapshot.items() if kind in kinds)


def phase_folder(root: Path, system: str, clients: int, round_: int) -> Path:
    return root / (f"{system}-{clients}" + (f"-round{round_}" if round_ > 1 else ""))


# == outside the load: idle, followers ================================================
@contextlib.contextmanager
def ours(appendfsync: str, workers: int, env: dict[str, str]) -> Iterator[tuple[list[int], int]]:
    """``ludotheque serve`` as ``bench.peer``'s ``ours-*`` runs it, settled:
    (the roots of its processes, its port)."""
    from bench.peer.__main__ import ours_server, settle
    from service.store.embedded import free_port

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with tempfile.TemporaryDirectory(prefix="ludotheque-profile-") as tmp:
            port = free_port()
            with ours_server(appendfsync, port, Path(tmp), workers, True) as process:
                settle([process.pid])
                yield [process.pid], port
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def cpu_per_second(roots: list[int], seconds: float) -> dict[str, Any]:
    """CPU ms per second of each kind and each process over ``seconds``."""
    from bench.peer.__main__ import TICK, cpu_by_kind, snapshot

    before, start = snapshot(roots, "ours"), time.monotonic()
    time.sleep(seconds)
    after, wall = snapshot(roots, "ours"), time.monotonic() - start
    by_kind = {k: round(v / wall * 1000, 2) for k, v in sorted(cpu_by_kind(before, after).items())}
    by_process = [
        {
            "pid": pid,
            "kind": kind,
            "cpu_ms_per_s": round(
                (used - before.get(pid, (kind, 0, 0))[1]) / TICK / wall * 1000, 2
            ),
        }
        for pid, (kind, used, _) in sorted(after.items())
    ]
    return {"seconds": round(wall, 2), "cpu_ms_per_s": by_kind, "processes": by_process}


def redis_commands(roots: list[int]) -> dict[str, int]:
    """Commands Redis has run so far, by command (``INFO commandstats``)."""
    from bench.peer.__main__ import snapshot

    for pid, (kind, _, _) in snapshot(roots, "ours").items():
        if kind == "redis":  # its title: "redis-server 127.0.0.1:PORT"
            address = re.search(rb"([\w.]+):(\d+)", Path(f"/proc/{pid}/cmdline").read_bytes())
            assert address is not None
            client = redis.Redis(address[1].decode(), int(address[2]))
            try:
                stats = client.info("commandstats")
            finally:
                client.close()
            return {name[len("cmdstat_") :]: v["calls"] for name, v in stats.items()}
    return {}


def idle_basis(system: str, measured: dict[str, Any]) -> dict[str, Any]:
    """What a summary converts shares with, outside the load: CPU per second."""
    per_s = measured["cpu_ms_per_s"]
    return {
        "unit": "second",
        "units": measured["seconds"],
        "system": system,
        "clients": 0,
        "round": 1,
        "seconds": measured["seconds"],
        "cpu_ms": {
            API: per_s.get("api_workers"),
            BACKGROUND: per_s.get("bot_workers", 0) + per_s.get("webhook_work", 0),
            REDIS: per_s.get("redis"),
        },
        "requests": {},
    }


def idle(args: argparse.Namespace) -> dict[str, Any]:
    """No load: CPU per second of each process of an ``ours`` server, and
    the commands per second Redis runs meanwhile."""
    from bench.peer.__main__ import snapshot

    with ours(args.appendfsync, args.workers, {}) as (roots, _):
        if args.warm:
            time.sleep(args.warm)
        recording = None
        if args.profile:
            folder = args.profile / f"idle-{args.appendfsync}"
            recording = Recording(folder, targets_of(snapshot(roots, "ours")), args.seconds)
            recording.start()
        commands = redis_commands(roots)
        found = cpu_per_second(roots, args.seconds)
        after = redis_commands(roots)
        found["redis_commands_per_s"] = {
            name: round((n - commands.get(name, 0)) / found["seconds"], 1)
            for name, n in sorted(after.items())
            if n > commands.get(name, 0)
        }
        # one INFO of the two is ours
        found["redis_commands_per_s"]["info"] = round(
            found["redis_commands_per_s"].get("info", 0) - 1 / found["seconds"], 1
        )
        if recording is not None:
            basis = idle_basis(f"ours-{args.appendfsync}, idle", found)
            found["summary"] = str(write_summary(recording.folder, basis, recording.finish()))
    return found


class Openers:
    """N HTTP requests held open on loopback, their answers read and dropped
    by one thread (so that no buffer fills), from one process."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.sockets: list[socket.socket] = []
        self.heads: dict[int, bytes] = {}
        self.lock = threading.Lock()
        self.stopped = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def open(self, request: bytes) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(request)
        sock.setblocking(False)
        with self.lock:
            self.sockets.append(sock)
            self.heads[sock.fileno()] = b""
            self.selector.register(sock, selectors.EVENT_READ)

    def answered(self) -> tuple[int, collections.Counter[str]]:
        """How many have their status line, and the statuses."""
        with self.lock:
            statuses = collections.Counter(
                h.split(b" ", 2)[1].decode() for h in self.heads.values() if b"\r\n" in h
            )
        return sum(statuses.values()), statuses

    def _read(self) -> None:
        while not self.stopped:
            with self.lock:
                empty = not self.sockets
            if empty:
                time.sleep(0.05)
                continue
            for key, _ in self.selector.select(timeout=0.2):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    data = sock.recv(65536)
                except OSError:
                    data = b""
                with self.lock:
                    if not data:
                        self.selector.unregister(sock)
                        continue
                    head = self.heads.get(sock.fileno(), b"")
                    if b"\r\n" not in head:
                        self.heads[sock.fileno()] = head + data[:64]

    def close(self) -> None:
        self.stopped = True
        self.reader.join(timeout=2)
        for sock in self.sockets:
            with contextlib.suppress(OSError):
                sock.close()
        self.sockets = []
        self.selector.close()


def followers(args: argparse.Namespace) -> dict[str, Any]:
    """CPU per open follower per second, and to open one: ``--followers``
    event streams (spectators, no token) on one idle match; then, on a fresh
    server, as many long polls of its first seat, which waits for the other
    seat's reveal. Each against its server with none open."""
    from bench.peer.__main__ import cpu_by_kind, settle, snapshot

    if args.seconds > 20:
        raise SystemExit("--seconds: at most 20 (a long poll waits 30 s)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = args.followers + 1000
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, wanted), hard))
    env = {
        "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_TOKEN": "0",
        "LUDOTHEQUE_FOLLOWERS_PER_PROCESS": "0",
        "LUDOTHEQUE_WORKER_CONNECTIONS": str(args.followers + 1000),
        "LUDOTHEQUE_STREAM_MAX_S": "3600",
    }
    found: dict[str, Any] = {"followers": args.followers}
    for kind in ("streams", "long_polls"):
        with ours(args.appendfsync, args.workers, env) as (roots, port):
            match, token = waiting_match(port)
            path = f"/v1/games/dekal/matches/{match}"
            if kind == "streams":
                request = f"GET {path}/stream HTTP/1.1\r\nHost: x\r\n"
                request += "Accept: text/event-stream\r\n\r\n"
            else:
                request = f"GET {path}?legal_actions=true&wait=30 HTTP/1.1\r\nHost: x\r\n"
                request += f"Authorization: Bearer {token}\r\n\r\n"
            time.sleep(1)  # the move's follow-ups
            settle(roots)
            none = cpu_per_second(roots, args.seconds)
            openers = Openers(port)
            try:
                before, started = snapshot(roots, "ours"), time.monotonic()
                for _ in range(args.followers):
                    openers.open(request.encode())
                if kind == "streams":  # a stream answers its head at once
                    while openers.answered()[0] < args.followers:
                        if time.monotonic() - started > 60:
                            raise SystemExit(f"{openers.answered()[0]} streams opened in 60 s")
                        time.sleep(0.05)
                settle(roots, 60)  # a long poll answers nothing until its wait ends
                opened = cpu_by_kind(before, snapshot(roots, "ours"))
                open_s = time.monotonic() - started
                recording = None
                if args.profile:
                    targets = targets_of(snapshot(roots, "ours"))
                    recording = Recording(
                        args.profile / f"followers-{kind}", targets, args.seconds
                    )
                    recording.start()
                with_them = cpu_per_second(roots, args.seconds)
                statuses = openers.answered()[1]
                if recording is not None:
                    system = f"ours-{args.appendfsync}, {args.followers} idle {kind} open"
                    basis = idle_basis(system, with_them)
                    summary = write_summary(recording.folder, basis, recording.finish())
            finally:
                openers.close()
        extra = {
            k: round((v - none["cpu_ms_per_s"].get(k, 0)) / args.followers * 1000, 3)
            for k, v in with_them["cpu_ms_per_s"].items()
        }
        serving = ("api_workers", "gunicorn_master", "redis")
        found[kind] = {
            "open_s": round(open_s, 2),
            "cpu_us_to_open_one": {
                k: round(v / args.followers * 1e6, 1) for k, v in sorted(opened.items())
            },
            "cpu_us_to_open_one_all": round(sum(opened.values()) / args.followers * 1e6, 1),
            # the status lines received while they were open: streams 200,
            # long polls none (they wait)
            "answered_while_open": dict(statuses),
            "none_open": none,
            "open": with_them,
            # (CPU with them - CPU with none) / N: µs of CPU per follower per second
            "cpu_us_per_follower_per_s": extra,
            # the processes a follower uses; the background workers' difference
            # is the measure's noise (no follower touches them)
            "cpu_us_per_follower_per_s_serving": round(sum(extra.get(k, 0) for k in serving), 3),
        }
        if args.profile:
            found[kind]["summary"] = str(summary)
    return found


def waiting_match(port: int) -> tuple[str, str]:
    """A two-player Dékal match where seat 0 has revealed and waits for
    seat 1: its id and seat 0's token."""
    base = f"http://127.0.0.1:{port}/v1/games/dekal/matches"
    created = requests.post(base, json={"players": [{"name": "P0"}, {"name": "P1"}]}, timeout=10)
    assert created.status_code == 201, created.text
    match, token = created.json()["id"], created.json()["seats"][0]["token"]
    auth = {"Authorization": f"Bearer {token}"}
    view = requests.get(f"{base}/{match}?legal_actions=true", headers=auth, timeout=10).json()
    played = requests.post(
        f"{base}/{match}/actions", json=view["legal_actions"][0], headers=auth, timeout=10
    )
    assert played.status_code == 200, played.text
    assert 0 not in played.json()["to_act"], "seat 0 should wait for seat 1"
    return match, token


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    summary = commands.add_parser("summary", help="write DIR/<phase>/summary.md again")
    summary.add_argument("folders", type=Path, nargs="+")
    for name, text in (
        ("idle", "CPU per second of each process of an idle server"),
        ("followers", "CPU per open follower (event streams, long polls) per second"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("--seconds", type=float, default=10, help="measured seconds")
        command.add_argument("--workers", type=int, default=2, help="gunicorn workers")
        command.add_argument(
            "--appendfsync", default="everysec", choices=("no", "everysec", "always")
        )
        command.add_argument("--json", type=Path, help="write the figures here")
    commands.choices["idle"].add_argument(
        "--warm", type=float, default=0, help="seconds to wait before measuring"
    )
    commands.choices["idle"].add_argument(
        "--profile", type=Path, help="record every process meanwhile, into DIR/idle-<mode>/"
    )
    commands.choices["followers"].add_argument(
        "--profile",
        type=Path,
        help="record every process while they are open, into DIR/followers-<kind>/",
    )
    commands.choices["followers"].add_argument(
        "--followers", type=int, default=1000, help="streams, then long polls, open at once"
    )
    args = parser.parse_args(argv)
    if args.command == "summary":
        for folder in args.folders:
            sys.stdout.write(f"{rewrite_summary(folder)}\n")
        return 0
    if getattr(args, "profile", None) and (reason := cannot_profile()):
        raise SystemExit(f"--profile: {reason}")
    found = idle(args) if args.command == "idle" else followers(args)
    text = orjson.dumps(found, option=orjson.OPT_INDENT_2).decode()
    sys.stdout.write(text + "\n")
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
