"""`ludotheque serve`: embedded Redis with AOF, gunicorn, clean stop, restart, and
the records' signing key kept in the data directory (a malformed setting
stopping `serve`, `worker` and gunicorn: tests/test_settings.py)."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import requests

from service.domain.signing import from_pem
from service.store.embedded import free_port
from tests.support.servers import LUDOTHEQUE, interrupt, start_serve


def test_serve_keeps_matches_across_a_restart_and_stops_cleanly(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env.pop("LUDOTHEQUE_RECORD_KEY_FILE", None)
    port = free_port()
    data = tmp_path / "data"
    server = start_serve(data, port, env)
    try:
        created = requests.post(
            f"http://127.0.0.1:{port}/v1/games/dekal/matches",
            json={"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 9},
            timeout=30,
        )
        assert created.status_code == 201
        match = created.json()
        token = match["seats"][0]["token"]
        url = f"http://127.0.0.1:{port}/v1/games/dekal/matches/{match['id']}"
        played = requests.post(
            url + "/actions",
            json={"type": "reveal", "row": 1, "col": 2},
            headers={"Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert played.status_code == 200
        key = requests.get(f"http://127.0.0.1:{port}/v1/record-key", timeout=30).json()
    finally:
        err = interrupt(server)
    assert server.returncode == 0, err
    assert any(data.rglob("*.aof")), "the embedded Redis keeps an append-only file"
    # the records' signing key, created on the first start, for its owner's eyes only
    key_file = data / "record-key.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert from_pem(key_file.read_bytes()).published() == key
    # nothing is left running: the port is free again
    again = start_serve(data, port, env)
    try:
        seen = requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=30).json()
        assert seen["version"] == played.json()["version"]
        assert seen["view"] == played.json()["view"]
        # the same key signs the records after the restart
        assert requests.get(f"http://127.0.0.1:{port}/v1/record-key", timeout=30).json() == key
    finally:
        interrupt(again)


def test_serve_uses_redis_url_starts_no_server_and_runs_a_bot_worker(tmp_path, redis_url):
    port = free_port()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # the session's Redis keeps other tests' quotas of 127.0.0.1: not this test's subject
    env = {**os.environ, "REDIS_URL": redis_url, "TMPDIR": str(scratch)}
    env["LUDOTHEQUE_RATE_LIMITS"] = "0"
    env["LUDOTHEQUE_BOT_SEATS_PER_ADDRESS"] = "0"
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    data = tmp_path / "data"
    server = start_serve(data, port, env)
    try:
        # gunicorn's workers share a metrics directory while they run
        assert [p.name.startswith("ludotheque-metrics-") for p in scratch.iterdir()] == [True]
        created = requests.post(
            f"http://127.0.0.1:{port}/v1/games/dekal/matches",
            json={"players": [{}, {"bot": "random"}]},
            timeout=30,
        )
        assert created.status_code == 201
        match_id = created.json()["id"]
        url = f"http://127.0.0.1:{port}/v1/games/dekal/matches/{match_id}/seats/0"
        assert requests.post(url, json={"name": "Ada"}, timeout=30).status_code == 201
        # the worker that `serve` started plays the bot's reveal
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            match = requests.get(url.rsplit("/seats", 1)[0], timeout=30).json()
            if match["to_act"] == [0]:
                break
            time.sleep(0.1)
        assert match["to_act"] == [0]
    finally:
        interrupt(server)
    # no Redis of its own: its data directory holds the archive's database only
    assert {p.name for p in data.iterdir()} <= {
        "ludotheque.db",
        "ludotheque.db-wal",
        "ludotheque.db-shm",
    }
    assert (data / "ludotheque.db").exists()
    assert not any(scratch.iterdir()), "the metrics directory outlived the server"


def children_of(pid: int) -> list[int]:
    return [int(n) for n in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_ctrl_c_ends_serve_even_when_a_server_of_it_hangs(tmp_path):
    """A server that does not stop on SIGTERM (hung: here stopped with
    SIGSTOP) is killed ``LUDOTHEQUE_STOP_S`` after Ctrl-C, and `serve` ends.
    It used to wait for it for ever: in a CI run, `serve` processes that
    outlived their tests went on playing and archiving other tests' matches."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["LUDOTHEQUE_STOP_S"] = "2"
    server = start_serve(tmp_path / "data", free_port(), env)
    workers = [
        pid
        for pid in children_of(server.pid)
        if b"worker" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    ]
    assert workers, "serve started no bot worker"
    os.kill(workers[0], signal.SIGSTOP)
    began = time.monotonic()
    log = interrupt(server)
    took = time.monotonic() - began
    assert took < 2 + 8, f"serve took {took:.1f} s to end"
    assert "did not stop within 2 s of SIGTERM: killed" in log, log
    assert not Path(f"/proc/{workers[0]}").exists(), "the hung worker outlived serve"


def test_openapi_command_writes_the_contract(tmp_path):
    out = tmp_path / "spec.json"
    subprocess.run([LUDOTHEQUE, "openapi", "--output", str(out)], check=True, capture_output=True)
    assert out.read_text().startswith("{")
