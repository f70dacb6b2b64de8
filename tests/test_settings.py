"""Every setting read in one place (``service.settings``): a malformed value
of each kind stops ``serve``, ``worker`` and gunicorn before anything
starts, naming the variable; nothing else in ``service/`` reads the
environment; ``docs/operators/configuration.md`` is what the settings say."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from service.app import create_app
from service.background import outbound
from service.background.scheduler import BotLimits
from service.background.webhooks import DeliverySettings
from service.cli import GUNICORN_CONF, delivery_settings, main
from service.domain.commits import Settings as MatchSettings
from service.live.followers import Bounds
from service.live.following import LiveSettings
from service.settings import (
    MALFORMED_SETTING,
    SET_BY_SERVE,
    Malformed,
    Settings,
    load,
    problems,
    variables,
)
from service.settings.page import markdown
from service.store.embedded import free_port

LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))
ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/operators/configuration.md"
NOWHERE = "/nonexistent/ludotheque"

# A malformed value of each kind of setting (service/settings/kinds.py).
MALFORMED = {
    "LUDOTHEQUE_FINISHED_TTL": "1d",  # a whole number
    "LUDOTHEQUE_IDLE_TTL": "-5",  # ... in its range
    "LUDOTHEQUE_BOT_BUDGET_MS": "fast",  # ... in a range with an upper end
    "LUDOTHEQUE_STREAM_MAX_S": "nan",  # seconds
    "LUDOTHEQUE_RATE_LIMITS": "maybe",  # a flag
    "LUDOTHEQUE_LOG_LEVEL": "loud",  # a choice
    "LUDOTHEQUE_RATE_LIMIT_CREATE": "60 a minute",  # rate limits
    "LUDOTHEQUE_CORS_ORIGINS": "https://play.example.org/",  # origins
    "REDIS_URL": "localhost:6379",  # a Redis URL
    "LUDOTHEQUE_METRICS_BIND": "9100",  # host:port
    "LUDOTHEQUE_BIND": "127.0.0.1:http",  # gunicorn's bind
    "LUDOTHEQUE_OUTBOUND_ALLOW": "http,loopback",  # the outbound allow list
    "LUDOTHEQUE_WORKER_TMP_DIR": NOWHERE,  # a directory
    "LUDOTHEQUE_RECORD_KEY_FILE": NOWHERE + ".pem",  # a readable file
    "LUDOTHEQUE_REDIS_SERVER": NOWHERE + "-server",  # a program
}

GUNICORN = [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONF)]


def commands(tmp_path: Path) -> dict[str, list[str]]:
    data = str(tmp_path / "data")
    serve = [LUDOTHEQUE, "serve", "--data-dir", data, "--port", str(free_port())]
    return {"serve": serve, "worker": [LUDOTHEQUE, "worker"], "gunicorn": GUNICORN}


# Each kind stops one of the three, in turn: they all read every setting with
# the same ``load_or_exit`` (and every kind's message is checked in-process
# below), so the processes that a product of the two would start, some 45
# seconds of the suite, would test nothing more.
STARTS = ("worker", "gunicorn", "serve")
CASES = [(STARTS[i % 3], name) for i, name in enumerate(MALFORMED)]
assert not [name for command, name in CASES if command == "serve" and name in SET_BY_SERVE]


@pytest.mark.parametrize(("command", "name"), CASES)
def test_a_malformed_setting_stops_the_command_at_once_naming_it(command, name, tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    env.pop("REDIS_URL", None)  # serve would start a Redis first, were it let through
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if command != "serve":
        env["REDIS_URL"] = "redis://127.0.0.1:1/0"
    env[name] = MALFORMED[name]
    ran = subprocess.run(
        commands(tmp_path)[command], env=env, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == MALFORMED_SETTING, ran.stderr
    assert ran.stderr.startswith(f"{name}: "), ran.stderr
    assert repr(MALFORMED[name].split(",")[-1]) in ran.stderr or "range" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "data").exists(), "nothing started"
    assert not any(scratch.iterdir()), "not even gunicorn's metrics directory"


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_value_is_named_with_what_the_variable_accepts(name):
    (problem,) = problems({name: MALFORMED[name]})
    assert problem.startswith(f"{name}: ")
    assert repr(MALFORMED[name].split(",")[-1]) in problem or "range" in problem


def test_every_malformed_setting_is_named_at_once():
    found = problems(MALFORMED)
    assert [p.split(":")[0] for p in found] == [n for n in variables() if n in MALFORMED]
    with pytest.raises(Malformed) as refused:
        load(MALFORMED)
    assert refused.value.problems == found


def test_serve_leaves_what_it_sets_to_its_options():
    assert problems(MALFORMED, skip=SET_BY_SERVE) == [
        p for p in problems(MALFORMED) if p.split(":")[0] not in SET_BY_SERVE
    ]


def test_what_the_docs_and_the_chart_set_is_well_formed(tmp_path):
    chart = yaml.safe_load((ROOT / "helm/ludotheque/values.yaml").read_text(encoding="utf-8"))
    assert set(chart["config"]) <= set(variables()), "the chart sets only settings"
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
        "REDIS_URL": "redis+sentinel://sentinel:26379/mymaster/0",
    }
    settings = load(well_formed)
    assert settings.outbound_allow.http and len(settings.outbound_allow.networks) == 2
    assert settings.cors_origins == ("https://play.example.org", "http://localhost:8080")
    assert (settings.rate_limits, settings.redis_cluster) == (False, True)
    assert (settings.log_level, settings.metrics_bind) == ("warning", "")


def test_an_empty_redis_url_is_no_redis_url():
    assert load({"REDIS_URL": ""}).redis_url is None


def test_the_settings_command_checks_the_environment():
    runner = CliRunner()
    well = runner.invoke(main, ["settings"], env={"LUDOTHEQUE_FINISHED_TTL": "60"})
    assert (well.exit_code, well.output) == (0, "every setting is well formed\n")
    wrong = runner.invoke(main, ["settings"], env={"LUDOTHEQUE_FINISHED_TTL": "1d"})
    assert wrong.exit_code == MALFORMED_SETTING
    assert "LUDOTHEQUE_FINISHED_TTL: '1d' is not a whole number (at least 1)" in wrong.output


# --- The app: configured by its settings, its config over them ------------------------


@pytest.fixture
def outbound_kept(monkeypatch):
    """create_app sets this process's outbound allowances: put them back after."""
    monkeypatch.setattr(outbound, "allowed", outbound.allowed)
    monkeypatch.setattr(outbound, "concurrency", outbound.concurrency)


def test_the_app_reads_the_environment_when_given_no_settings(monkeypatch, outbound_kept):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.setenv("LUDOTHEQUE_FINISHED_TTL", "60")
    monkeypatch.setenv("LUDOTHEQUE_CORS_ORIGINS", "https://play.example.org")
    monkeypatch.setenv("LUDOTHEQUE_OUTBOUND_ALLOW", "http")
    app = create_app()
    assert app.config["FINISHED_TTL"] == 60
    assert app.config["CORS_ORIGINS"] == ["https://play.example.org"]
    assert outbound.allowed == outbound.Allowed(http=True)
    monkeypatch.setenv("LUDOTHEQUE_FINISHED_TTL", "1d")
    with pytest.raises(Malformed, match=r"^LUDOTHEQUE_FINISHED_TTL: '1d'"):
        create_app()


def test_the_apps_config_wins_over_its_settings(outbound_kept):
    settings = load(
        {"REDIS_URL": "redis://127.0.0.1:1/0", "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS": "5"}
    )
    app = create_app({"BOT_SEATS_PER_ADDRESS": 0, "RATELIMIT_ENABLED": False}, settings)
    assert app.config["BOT_SEATS_PER_ADDRESS"] == 0
    assert app.config["RATELIMIT_ENABLED"] is False
    assert app.config["REDIS_URL"] == "redis://127.0.0.1:1/0"


def test_the_settings_defaults_are_the_ones_the_layers_below_assume():
    """The layers below keep defaults of their own (for what builds them
    directly, tests and benchmarks): the same as the settings'."""
    settings = Settings()
    assert delivery_settings(settings) == DeliverySettings()
    bounds = Bounds(
        settings.followers_per_address,
        settings.followers_per_token,
        settings.followers_per_process,
        settings.stream_max_s,
    )
    assert bounds == Bounds()
    assert BotLimits(settings.bot_seats_per_address, settings.bot_match_budget_s) == BotLimits()
    below = MatchSettings()
    assert (below.finished_ttl, below.idle_ttl, below.waiting_ttl) == (
        settings.finished_ttl,
        settings.idle_ttl,
        settings.waiting_ttl,
    )
    live = LiveSettings()
    assert (live.keepalive_s, live.ticket_ttl, live.bounds) == (
        settings.sse_keepalive_s,
        settings.stream_ticket_ttl,
        bounds,
    )


# --- One place reads the environment, and the page says it all -------------------------


def environment_reads(source: str) -> list[int]:
    """The lines of ``source`` that read the environment (writing a
    variable for a child process, ``os.environ[name] = value``, is no read)."""
    tree = ast.parse(source)
    written = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store)
    }
    names = {"environ", "environb", "getenv", "getenvb"}
    return [
        node.lineno
        for node in ast.walk(tree)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in names
            and id(node) not in written
        )
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "os"
            and names & {alias.name for alias in node.names}
        )
    ]


def test_nothing_but_the_settings_reads_the_environment():
    assert environment_reads("import os\nx = os.environ.get('A')\nos.environ['B'] = x\n") == [2]
    readers = {
        str(path.relative_to(ROOT)): lines
        for path in (ROOT / "service").rglob("*.py")
        if "settings" not in path.relative_to(ROOT / "service").parts
        and (lines := environment_reads(path.read_text(encoding="utf-8")))
    }
    assert readers == {}, "read the environment in service/settings/ only"


def test_every_variable_the_service_names_is_a_setting():
    named = set()
    for path in (ROOT / "service").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"[\"'](LUDOTHEQUE_[A-Z_]+)[\"']", text))
    assert {"LUDOTHEQUE_BIND", "LUDOTHEQUE_RECORD_KEY_FILE"} <= named
    assert named <= set(variables()), sorted(named - set(variables()))


def test_the_configuration_page_is_what_the_settings_say():
    """Written by ``ludotheque settings --markdown > docs/operators/configuration.md``."""
    assert PAGE.read_text(encoding="utf-8") == markdown(), (
        "run `ludotheque settings --markdown > docs/operators/configuration.md`"
    )
    for name in variables():
        assert f"| `{name}` |" in markdown()
