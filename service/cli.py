"""The ``ludotheque`` command: ``serve`` and ``openapi``."""

from __future__ import annotations

import json
import logging
import math
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import click

from service.background import outbound

GUNICORN_CONF = Path(__file__).parent / "server" / "gunicorn_conf.py"

# sysexits' EX_CONFIG: a setting is malformed (``check_settings``)
MALFORMED_SETTING = 78


@click.group()
@click.pass_context
def main(ctx: click.Context) -> None:
    """Ludothèque, an open game server."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if ctx.invoked_subcommand in ("serve", "worker"):
        # before the subcommand reads its options (worker's --budget-ms default)
        refuse_malformed_settings(os.environ, set_by_serve=ctx.invoked_subcommand == "serve")


# --- Settings, checked before anything starts ---------------------------------
#
# A malformed setting used to surface late: LUDOTHEQUE_OUTBOUND_ALLOW=loopback
# made every creation with a webhook answer 500, a bad number a traceback in
# each gunicorn worker. ``serve`` and ``worker`` check every variable the
# service reads first, and stop with one line per malformed one.


def _whole(least: int, most: int | None = None) -> Callable[[str], None]:
    def check(text: str) -> None:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
        if value < least or (most is not None and value > most):
            span = f"from {least} to {most}" if most is not None else f"at least {least}"
            raise ValueError(f"{value} is out of range: {span}")

    return check


def _seconds(positive: bool) -> Callable[[str], None]:
    def check(text: str) -> None:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number of seconds") from None
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            raise ValueError(f"{text!r} must be {'above' if positive else 'at least'} 0")

    return check


def _flag(text: str) -> None:
    if text.strip().lower() not in {"1", "true", "yes", "on", "0", "false", "no", "off"}:
        raise ValueError(f"{text!r} is not 1/0, true/false, yes/no or on/off")


def _choice(*names: str) -> Callable[[str], None]:
    def check(text: str) -> None:
        if text.strip().lower() not in names:
            raise ValueError(f"{text!r} is not one of {', '.join(names)}")

    return check


def _rate_limits(text: str) -> None:
    from limits import parse_many

    try:
        parse_many(text)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a rate limit such as 60/minute or 60/minute;600/hour"
        ) from None


def _origins(text: str) -> None:
    for origin in (o.strip() for o in text.split(",")):
        parts = urlsplit(origin)
        if (
            not origin
            or parts.scheme not in ("http", "https")
            or not parts.hostname
            or origin != f"{parts.scheme}://{parts.netloc}"
        ):
            raise ValueError(f"{origin!r} is not an origin such as https://play.example.org")


def _outbound_allow(text: str) -> None:
    try:  # the one reading of it, which the calls use too
        outbound.parse_allow(text)
    except ValueError as wrong:
        raise ValueError(str(wrong).removeprefix(f"{outbound.ALLOW_ENV}: ")) from None


def _host_port(text: str) -> None:
    _, colon, port = text.strip().rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{text!r} is not host:port, such as 0.0.0.0:9100 or [::1]:9100")


def _metrics_bind(text: str) -> None:
    if text.strip():  # empty: /metrics on the API's port
        _host_port(text)


def _bind(text: str) -> None:
    # gunicorn's: host:port, a host alone (port 8000), unix:PATH or fd://N, comma-separated
    for item in (i.strip() for i in text.split(",")):
        if not item:
            raise ValueError(f"{text!r} names no address")
        if ":" in item and not item.startswith(("unix:", "fd://")):
            _host_port(item)


def _directory(text: str) -> None:
    if not Path(text).is_dir():
        raise ValueError(f"{text!r} is not a directory")


def _readable_file(text: str) -> None:
    if not (Path(text).is_file() and os.access(text, os.R_OK)):
        raise ValueError(f"{text!r} is not a readable file")


def _program(text: str) -> None:
    if not (Path(text).is_file() and os.access(text, os.X_OK)):
        raise ValueError(f"{text!r} is not an executable file")


# Every variable the service reads (tests/test_cli.py: every one in service/
# is here), and what makes it malformed.
SETTINGS: dict[str, Callable[[str], None]] = {
    "REDIS_CLUSTER": _flag,
    "LUDOTHEQUE_REDIS_MIN_REPLICAS": _whole(0),
    # WAIT with a timeout of 0 would wait for ever
    "LUDOTHEQUE_REDIS_REPLICAS_TIMEOUT_MS": _whole(1),
    "LUDOTHEQUE_REDIS_MAX_CONNECTIONS": _whole(1),
    "LUDOTHEQUE_FINISHED_TTL": _whole(1),
    "LUDOTHEQUE_IDLE_TTL": _whole(1),
    "LUDOTHEQUE_IDEMPOTENCY_TTL": _whole(1),
    "LUDOTHEQUE_WAITING_TTL": _whole(1),
    "LUDOTHEQUE_STREAM_TICKET_TTL": _whole(1),
    "LUDOTHEQUE_MAX_BODY_BYTES": _whole(1),
    "LUDOTHEQUE_SSE_KEEPALIVE_S": _seconds(positive=True),
    "LUDOTHEQUE_STREAM_MAX_S": _seconds(positive=True),
    "LUDOTHEQUE_RATE_LIMITS": _flag,
    "LUDOTHEQUE_RATE_LIMIT_PER_ADDRESS": _rate_limits,
    "LUDOTHEQUE_RATE_LIMIT_PER_TOKEN": _rate_limits,
    "LUDOTHEQUE_RATE_LIMIT_CREATE": _rate_limits,
    "LUDOTHEQUE_CORS_ORIGINS": _origins,
    "LUDOTHEQUE_TRUSTED_PROXIES": _whole(0),
    "LUDOTHEQUE_MAX_WAITING_PER_ADDRESS": _whole(0),
    "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS": _whole(0),
    "LUDOTHEQUE_BOT_MATCH_BUDGET_S": _seconds(positive=False),
    "LUDOTHEQUE_BOT_BUDGET_MS": _whole(1, 60_000),
    "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS": _whole(0),
    "LUDOTHEQUE_FOLLOWERS_PER_TOKEN": _whole(0),
    "LUDOTHEQUE_FOLLOWERS_PER_PROCESS": _whole(0),
    "LUDOTHEQUE_METRICS_BIND": _metrics_bind,
    "LUDOTHEQUE_BIND": _bind,
    "LUDOTHEQUE_WORKERS": _whole(1),
    "LUDOTHEQUE_WORKER_CONNECTIONS": _whole(1),
    "LUDOTHEQUE_WORKER_TMP_DIR": _directory,
    "LUDOTHEQUE_KEEPALIVE_S": _whole(0),
    "LUDOTHEQUE_LOG_LEVEL": _choice("debug", "info", "warning", "error", "critical"),
    "LUDOTHEQUE_APPENDFSYNC": _choice("always", "everysec", "no"),
    "LUDOTHEQUE_REDIS_SERVER": _program,
    "LUDOTHEQUE_OUTBOUND_ALLOW": _outbound_allow,
    "LUDOTHEQUE_OUTBOUND_CONCURRENCY": _whole(1),
    "LUDOTHEQUE_WEBHOOK_GIVE_UP_S": _seconds(positive=True),
    "LUDOTHEQUE_WEBHOOK_THREADS": _whole(1),
    "LUDOTHEQUE_WEBHOOK_RETRY_THREADS": _whole(1),
    "LUDOTHEQUE_WEBHOOK_LEASE_S": _seconds(positive=True),
    "LUDOTHEQUE_WEBHOOK_CALLS": _whole(1),
    "LUDOTHEQUE_RECORD_KEY_FILE": _readable_file,
}

# what ``serve`` sets itself, from its options, whatever the environment says
SET_BY_SERVE = {"LUDOTHEQUE_BIND", "LUDOTHEQUE_WORKERS"}


def check_settings(environ: Mapping[str, str], skip: frozenset[str] = frozenset()) -> list[str]:
    """``NAME: what is wrong``, for each malformed setting in ``environ``."""
    problems = []
    for name, check in SETTINGS.items():
        if name in environ and name not in skip:
            try:
                check(environ[name])
            except ValueError as wrong:
                problems.append(f"{name}: {wrong}")
    return problems


def refuse_malformed_settings(environ: Mapping[str, str], set_by_serve: bool = False) -> None:
    """Exit (status 78) with one line on stderr per malformed setting."""
    problems = check_settings(environ, frozenset(SET_BY_SERVE) if set_by_serve else frozenset())
    if problems:
        for problem in problems:
            click.echo(problem, err=True)
        raise SystemExit(MALFORMED_SETTING)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--data-dir",
    default="data",
    show_default=True,
    type=click.Path(file_okay=False),
    help="where the embedded Redis keeps its AOF (unused with REDIS_URL)",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="gunicorn worker processes",
)
@click.option(
    "--bot-workers",
    default=lambda: cores(),
    show_default="one per core",
    type=click.IntRange(1, 64),
    help="`ludotheque worker` processes playing bot turns",
)
def serve(host: str, port: int, data_dir: str, workers: int, bot_workers: int) -> None:
    """Serve the API under gunicorn and play bot turns in `ludotheque worker`
    processes; without REDIS_URL, start a private Redis too."""
    from service.store.embedded import EmbeddedRedis

    # Until the servers run, SIGTERM unwinds normally (stopping the embedded Redis).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.environ["LUDOTHEQUE_BIND"] = f"{host}:{port}"
    os.environ["LUDOTHEQUE_WORKERS"] = str(workers)
    if os.environ.get("REDIS_URL"):
        run_servers(bot_workers)
        return
    with EmbeddedRedis(data_dir) as url:
        os.environ["REDIS_URL"] = url
        if "LUDOTHEQUE_RECORD_KEY_FILE" not in os.environ:  # records' key, kept beside the AOF
            from service.domain.signing import ensure_key_file

            os.environ["LUDOTHEQUE_RECORD_KEY_FILE"] = str(ensure_key_file(Path(data_dir)))
        run_servers(bot_workers)


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_servers(bot_workers: int = 1) -> None:
    """gunicorn and ``bot_workers`` bot workers, each a process of its own
    (gevent patches gunicorn before any import) in a session of its own, so
    that Ctrl-C reaches only this process, which stops them gracefully
    (SIGTERM) and waits for them. The bot workers share one queue in Redis
    (``service.background.scheduler``)."""
    commands = [
        [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONF)],
        *[[sys.executable, "-m", "service.cli", "worker"]] * bot_workers,
    ]
    children = [subprocess.Popen(command, start_new_session=True) for command in commands]

    def stop(*_: object) -> None:
        for child in children:
            if child.poll() is None:
                child.terminate()

    signal.signal(signal.SIGTERM, stop)
    try:
        code = children[0].wait()
    except KeyboardInterrupt:
        code = 0
    stop()
    for child in children:
        child.wait()
    if code not in (0, -signal.SIGTERM):
        raise SystemExit(code)


@main.command()
@click.option(
    "--budget-ms",
    type=click.IntRange(1, 60_000),
    default=lambda: int(os.environ.get("LUDOTHEQUE_BOT_BUDGET_MS", "1000")),
    show_default="1000, or $LUDOTHEQUE_BOT_BUDGET_MS",
    help="thinking time per bot move",
)
def worker(budget_ms: int) -> None:
    """Play bot turns and expired turn clocks (REDIS_URL required)."""
    from service.app import create_app
    from service.background.worker import run_worker
    from service.observability import configure_logging

    configure_logging()
    run_worker(budget_ms / 1000, create_app)


@main.command()
@click.option(
    "--output", default="openapi/openapi.json", show_default=True, type=click.Path(dir_okay=False)
)
def openapi(output: str) -> None:
    """Write the OpenAPI contract."""
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(spec_text() + "\n", encoding="utf-8")
    click.echo(f"wrote {output}")


def spec_text() -> str:
    """The contract as committed: what the app serves at /openapi.json."""
    from service.app import create_app

    # redis-py connects lazily: building the spec never touches this address.
    app = create_app({"REDIS_URL": "redis://127.0.0.1:1/0"})
    spec = app.extensions["ludotheque.api"].spec.to_dict()
    return json.dumps(spec, indent=2, ensure_ascii=False)


@main.command()
@click.argument("record", type=click.File("rb"))
@click.option(
    "--key",
    help="the server's public record key: its 64 hex digits, or a file holding them, "
    "GET /v1/record-key's answer or a PEM key",
)
@click.option("--server", help="fetch the public key from this server's GET /v1/record-key")
def verify(record: click.utils.LazyFile, key: str | None, server: str | None) -> None:
    """Check a finished match's RECORD (a file, or - for stdin), as
    GET .../matches/{id}/record gives it: the server's signature binds every
    field, the seed and salt give the commitment shown during the match, the
    actions replay with the engine, the endings are ones the server allows,
    and all lead to the recorded outcome. The public key comes from --key
    (offline), --server, else $LUDOTHEQUE_RECORD_KEY_FILE or ./data's key
    (`ludotheque serve`'s own). Exit status 0 only when all holds."""
    from service.domain.fairness import verify as check
    from service.domain.signing import load_record

    public = record_public_key(key, server)
    try:
        document = load_record(record.read())
    except ValueError as malformed:
        raise click.ClickException(f"not a record's JSON: {malformed}") from None
    if not isinstance(document, dict):
        raise click.ClickException("not a record: the JSON is not an object")
    problems = check(document, public)
    if problems:
        for problem in problems:
            click.echo(f"FAILED: {problem}", err=True)
        raise SystemExit(1)
    click.echo(
        f"ok: {document['game']} match {document.get('id')}, signed by "
        f"{document['signature']['key_id']}: the seed and salt give the "
        f"commitment {document['seed_commitment']}, and its {len(document['actions'])} "
        f"actions replay to the recorded outcome (winners {document['outcome']['winners']})"
        + (" [seeded: the creator chose this seed]" if document.get("seeded") else "")
    )


def record_public_key(key: str | None, server: str | None) -> bytes:
    """The public key to check a record's signature with (``verify``)."""
    from service.domain.signing import KEY_FILE, parse_public_key

    if key is not None and server is not None:
        raise click.UsageError("give --key or --server, not both")
    if server is not None:
        import urllib.request

        url = server.rstrip("/") + "/v1/record-key"
        try:
            with urllib.request.urlopen(url, timeout=30) as answer:
                text = answer.read().decode("utf-8")
        except (OSError, ValueError) as failed:
            raise click.ClickException(f"no public key from {url}: {failed}") from None
        source = url
    else:
        found = key or os.environ.get("LUDOTHEQUE_RECORD_KEY_FILE")
        if found is None and Path("data", KEY_FILE).exists():
            found = str(Path("data", KEY_FILE))
        if found is None:
            raise click.UsageError(
                "no public key to check the signature with: give --key (the server's "
                "GET /v1/record-key) or --server URL"
            )
        source, text = found, found
        if Path(found).is_file():
            text = Path(found).read_text(encoding="utf-8")
    try:
        return parse_public_key(text)
    except (ValueError, KeyError, TypeError) as malformed:
        raise click.ClickException(f"not a public record key ({source}): {malformed}") from None


@main.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def arena(args: tuple[str, ...]) -> None:
    """Measure bot strength: --game G --seats mcts,random --games N
    [--budget-ms B] [--iterations I] [--jobs J] [--options JSON] [--json]
    (--help for more)."""
    from engines.ai.arena import main as arena_main

    raise SystemExit(arena_main(list(args)))


@main.command()
@click.option("--url", required=True, help="the server, e.g. http://127.0.0.1:8000")
@click.option("--game", required=True)
@click.option("--match", "match_id", required=True)
@click.option("--token", required=True, help="the seat's token")
@click.option(
    "--policy", type=click.Choice(["random", "greedy", "mcts"]), default="mcts", show_default=True
)
@click.option("--budget-ms", type=click.IntRange(1, 60_000), default=1000, show_default=True)
@click.option(
    "--rematches",
    type=click.IntRange(0, 1000),
    default=0,
    show_default=True,
    help="then offer (or accept) this many rematches in a row, and play them",
)
def bot(
    url: str, game: str, match_id: str, token: str, policy: str, budget_ms: int, rematches: int
) -> None:
    """Play one seat through the public HTTP API until the match ends (one
    outcome per line, one line per match played)."""
    from service.botclient import BotClient

    client = BotClient(url, game, match_id, token, policy, budget_ms / 1000, rematches=rematches)
    for outcome in client.run_series():
        click.echo(json.dumps(outcome))


if __name__ == "__main__":
    main()
