"""`ludotheque serve`: embedded Redis with AOF, gunicorn, clean stop, restart, and
the records' signing key kept in the data directory; `serve` and `worker`
refusing a malformed setting."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml

from service.app import ENVIRONMENT
from service.cli import MALFORMED_SETTING, SETTINGS, check_settings
from service.domain.signing import from_pem
from service.store.embedded import free_port
from tests.support.servers import LUDOTHEQUE, interrupt, start_serve

ROOT = Path(__file__).resolve().parents[2]


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
    server = start_serve(tmp_path / "unused", port, env)
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
    assert not (tmp_path / "unused").exists()
    assert not any(scratch.iterdir()), "the metrics directory outlived the server"


def test_openapi_command_writes_the_contract(tmp_path):
    out = tmp_path / "spec.json"
    subprocess.run([LUDOTHEQUE, "openapi", "--output", str(out)], check=True, capture_output=True)
    assert out.read_text().startswith("{")


# --- A malformed setting stops serve and worker before anything starts --------

MALFORMED = {
    "LUDOTHEQUE_OUTBOUND_ALLOW": "http,loopback",
    "LUDOTHEQUE_TRUSTED_PROXIES": "abc",
    "LUDOTHEQUE_RATE_LIMIT_CREATE": "60 a minute",
    "LUDOTHEQUE_FINISHED_TTL": "1d",
    "LUDOTHEQUE_IDLE_TTL": "-5",
    "LUDOTHEQUE_STREAM_MAX_S": "nan",
    "LUDOTHEQUE_RATE_LIMITS": "maybe",
    "LUDOTHEQUE_CORS_ORIGINS": "https://play.example.org/",
    "LUDOTHEQUE_METRICS_BIND": "9100",
    "LUDOTHEQUE_BOT_BUDGET_MS": "fast",
    "LUDOTHEQUE_WEBHOOK_CALLS": "0",
}


@pytest.mark.parametrize("command", ["serve", "worker"])
@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_setting_stops_the_command_at_once_naming_it(command, name, tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, name: MALFORMED[name]}
    env.pop("REDIS_URL", None)  # serve would start a Redis first, were it let through
    if command == "worker":
        env["REDIS_URL"] = "redis://127.0.0.1:1/0"
    arguments = ["--data-dir", str(data), "--port", str(free_port())] if command == "serve" else []
    ran = subprocess.run(
        [LUDOTHEQUE, command, *arguments], env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == MALFORMED_SETTING, ran.stderr
    assert ran.stderr.startswith(f"{name}: "), ran.stderr
    assert repr(MALFORMED[name].split(",")[-1]) in ran.stderr or "range" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not data.exists(), "nothing started"


def test_every_malformed_setting_is_named_at_once():
    problems = check_settings(MALFORMED)
    assert sorted(p.split(":")[0] for p in problems) == sorted(MALFORMED)


def test_what_the_docs_and_the_chart_set_is_well_formed(tmp_path):
    chart = yaml.safe_load((ROOT / "helm/ludotheque/values.yaml").read_text(encoding="utf-8"))
    well_formed = {
        **chart["config"],
        "LUDOTHEQUE_OUTBOUND_ALLOW": "http,127.0.0.0/8,::1",
        "LUDOTHEQUE_CORS_ORIGINS": "https://play.example.org, http://localhost:8080",
        "LUDOTHEQUE_RATE_LIMIT_CREATE": "60/minute;600/hour",
        "LUDOTHEQUE_RATE_LIMITS": "0",
        "LUDOTHEQUE_TRUSTED_PROXIES": "1",
        "LUDOTHEQUE_SSE_KEEPALIVE_S": "0.5",
        "LUDOTHEQUE_METRICS_BIND": "",
        "LUDOTHEQUE_BIND": "[::1]:8000,unix:/tmp/ludo.sock",
        "LUDOTHEQUE_WORKER_TMP_DIR": str(tmp_path),
        "LUDOTHEQUE_LOG_LEVEL": "WARNING",
        "REDIS_CLUSTER": "1",
    }
    assert check_settings(well_formed) == []


def test_every_variable_the_service_reads_is_checked():
    read = set()
    for path in (ROOT / "service").glob("*.py"):
        read |= set(
            re.findall(r"[\"'](LUDOTHEQUE_[A-Z_]+)[\"']", path.read_text(encoding="utf-8"))
        )
    read |= {name for _, name, _ in ENVIRONMENT if name != "REDIS_URL"}
    assert "LUDOTHEQUE_OUTBOUND_ALLOW" in read and "LUDOTHEQUE_KEEPALIVE_S" in read
    assert read <= set(SETTINGS), sorted(read - set(SETTINGS))
    documented = (ROOT / "docs/configuration.md").read_text(encoding="utf-8")
    missing = [name for name in SETTINGS if f"`{name}`" not in documented]
    assert not missing, f"docs/configuration.md does not list {missing}"
