"""The peer benchmark (``python -m bench.peer``, issue 34): boardgame.io 0.50.2
serving a Dékal port, against Ludothèque, the same load on both.

Needs Node.js and npm (``npm ci`` runs in bench/peer when its node_modules
is missing); without them these tests skip, unless LUDOTHEQUE_REQUIRE_NODE=1
(CI), which makes that a failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from engines import GAMES

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT / "bench" / "peer"
NEED_NODE = "install Node.js and npm: apt-get install -y nodejs npm"


@pytest.fixture(scope="module")
def node_modules() -> None:
    """Node.js and npm here, and bench/peer's packages installed (``npm ci``)."""
    if not (shutil.which("node") and shutil.which("npm")):
        if os.environ.get("LUDOTHEQUE_REQUIRE_NODE") == "1":
            pytest.fail(f"{NEED_NODE} (LUDOTHEQUE_REQUIRE_NODE=1)")
        pytest.skip(NEED_NODE)
    # one `npm ci` at a time: pytest-xdist may run this module's tests in two workers
    with (Path(tempfile.gettempdir()) / "ludotheque-peer-npm-ci.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (PEER / "node_modules" / "boardgame.io" / "package.json").exists():
            done = subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund"],
                cwd=PEER,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def playout(players: int, seed: int) -> dict[str, Any]:
    """A random single-manche Dékal match played by the engine: its deal,
    then each action with every view and legal actions after it."""
    game = GAMES["dekal"]
    state = game.setup(game.options_schema().load({}), players, seed)
    start = json.loads(json.dumps(state))
    rng = random.Random(seed)
    steps = []
    while seats := game.to_act(state):
        seat = rng.choice(seats)
        action = rng.choice(game.legal_actions(state, seat))
        game.apply(state, seat, action)
        steps.append(
            {
                "seat": seat,
                "action": action,
                "to_act": game.to_act(state),
                "views": [game.view(state, s) for s in [*range(players), None]],
                "legal": [game.legal_actions(state, s) for s in range(players)],
            }
        )
    return {"state": start, "steps": json.loads(json.dumps(steps))}


def test_the_port_plays_dekal_as_the_engine_does(node_modules: None) -> None:
    """Same deal, same actions: the port's views (redaction included), whose
    turn it is and legal actions are the engine's after every action."""
    matches = [playout(players, seed) for players in (2, 3, 4) for seed in range(1, 5)]
    done = subprocess.run(
        ["node", "parity.js"],
        cwd=PEER,
        input=json.dumps(matches),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    checked = json.loads(done.stdout)
    assert checked["steps"] == sum(len(m["steps"]) for m in matches)
    assert checked["mismatches"] == []


def test_a_short_peer_run_plays_every_kind_of_system(node_modules: None, tmp_path: Path) -> None:
    """``python -m bench.peer`` reduced: boardgame.io, Ludothèque and the
    floor of its stack play whole matches and the JSON has the figures the
    issue asks for."""
    out = tmp_path / "peer.json"
    command = [sys.executable, "-m", "bench.peer", "--clients", "2", "--rounds", "1"]
    systems = "bgio-memory,ours-everysec,floor-everysec"
    command += ["--seconds", "3", "--systems", systems, "--json", str(out)]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    document = json.loads(out.read_text())
    assert document["bench"] == "peer"
    phases = {p["system"]: p for p in document["figures"]["phases"]}
    assert set(phases) == {"bgio-memory", "ours-everysec", "floor-everysec"}
    for system, p in phases.items():
        assert p["moves"] > 0, (system, p)
        assert p["moves_per_s"] > 0
        assert p["move_latency_ms"]["p50"] is not None and p["move_latency_ms"]["p99"] is not None
        assert {"p50", "p99", "over_500ms"} <= set(p["handoff_ms"])
        assert p["server_cpu_ms_per_move"] > 0
        assert p["errors"] == {}, (system, p["errors"])
    assert set(phases["bgio-memory"]["cpu_ms_per_move"]) == {"node"}
    ours = phases["ours-everysec"]
    assert {"api_workers", "gunicorn_master", "bot_workers", "webhook_work", "redis"} <= set(
        ours["cpu_ms_per_move"]
    )
    assert ours["requests_per_move"]["action"] > 0
    assert ours["server_time_per_request_kind"]["action"]["requests"] > 0
    floor = phases["floor-everysec"]
    assert {"api_workers", "gunicorn_master", "redis"} == set(floor["cpu_ms_per_move"])
    assert floor["cpu_ms_per_move"]["api_workers"] > 0
    # a create per match, a POST per move, a long poll per turn handed over
    assert floor["requests_per_move"]["action"] > 0.9
    assert floor["requests_per_move"]["view_wait"] > 0.9
    assert floor["matches_finished"] > 0
    summary = document["figures"]["summary"]
    assert set(summary) == {"bgio-memory", "ours-everysec", "floor-everysec"}
    ratios = document["figures"]["cpu_per_move_ratios"]
    assert set(ratios) == {"floor-everysec / bgio-memory", "ours-everysec / floor-everysec"}
    assert all(value > 0 for by_count in ratios.values() for value in by_count["2"])
    assert "moves/s" in done.stdout


def test_a_profiled_peer_run_names_where_the_cpu_goes(node_modules: None, tmp_path: Path) -> None:
    """``python -m bench.peer --profile DIR`` reduced: every server process of
    the phase recorded over its window (py-spy: the API and background
    workers; perf: Redis), and a summary naming each cost by category and
    key frame, in µs per move and per request."""
    from bench.peer import profile

    if reason := profile.cannot_profile():
        pytest.skip(f"--profile: {reason}")
    out, folder = tmp_path / "peer.json", tmp_path / "profile"
    command = [sys.executable, "-m", "bench.peer", "--clients", "2", "--rounds", "1"]
    command += ["--seconds", "3", "--systems", "ours-everysec", "--json", str(out)]
    command += ["--profile", str(folder)]
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # about 20 s; the timeout leaves room for a busy machine
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    phase = folder / "ours-everysec-2"
    (figures,) = json.loads(out.read_text())["figures"]["phases"]
    assert figures["profile"] == str(phase / "summary.md")
    raw = {path.name.split("-")[0] for path in phase.glob("*-*.txt")}
    assert raw == {"api_workers", "background", "redis"}, sorted(phase.iterdir())
    workers = list(phase.glob("api_workers-*.txt"))
    assert len(workers) == 2 and all(path.stat().st_size > 0 for path in workers)
    summary = (phase / "summary.md").read_text()
    for heading in ("## API workers", "## background workers", "## Redis"):
        assert heading in summary
    assert "| category | share | µs/move | µs/request |" in summary
    for named in (
        "gevent: ",
        "gunicorn: ",
        "werkzeug/Flask: ",
        "redis-py: ",
        "request hooks: access log, metrics",
        "the action route (Actions.post)",
        "its long poll (turns.turn_of)",
        "Store.commit",
        "hub thread: Listener.listen",
        "kernel: ",
    ):
        assert named in summary, named
    # a top list for each process kind sampled: the API workers and Redis
    # always; the background workers, idle here, only when py-spy caught them
    kinds = summary.count("\n## ")
    assert summary.count("### Top 25") == kinds - summary.count("No samples.") >= 2
