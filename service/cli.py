"""The ``ludotheque`` command: ``serve``, ``worker``, ``migrate``, ``export``, ``openapi``
and more."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from service.settings import SET_BY_SERVE, Settings, load_or_exit

if TYPE_CHECKING:
    from flask import Flask

    from service.background.webhooks import DeliverySettings
    from service.store.players import Players

GUNICORN_CONF = Path(__file__).parent / "server" / "gunicorn_conf.py"
REDIS_URL_FILE = "redis.url"  # in `serve`'s data directory, while its embedded Redis runs


@click.group()
@click.pass_context
def main(ctx: click.Context) -> None:
    """Ludothèque, an open game server."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if ctx.invoked_subcommand in ("serve", "worker"):
        # Every setting, read once before anything starts: a malformed one
        # stops the command here (status 78), naming it. ``serve`` sets the
        # gunicorn ones its options say, whatever the environment says.
        skip = SET_BY_SERVE if ctx.invoked_subcommand == "serve" else ()
        ctx.obj = load_or_exit(skip)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option(
    "--data-dir",
    default="data",
    show_default=True,
    type=click.Path(file_okay=False),
    help="where the embedded Redis keeps its AOF (not with REDIS_URL), and the archive's "
    "SQLite database (not with LUDOTHEQUE_DATABASE_URL)",
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
@click.pass_obj
def serve(
    settings: Settings, host: str, port: int, data_dir: str, workers: int, bot_workers: int
) -> None:
    """Serve the API under gunicorn and play bot turns in `ludotheque worker`
    processes; without REDIS_URL, start a private Redis too."""
    from service.store.embedded import EmbeddedRedis

    # Until the servers run, SIGTERM unwinds normally (stopping the embedded Redis).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    # The servers are processes of their own: they read these from the environment.
    os.environ["LUDOTHEQUE_BIND"] = f"{host}:{port}"
    os.environ["LUDOTHEQUE_WORKERS"] = str(workers)
    # the archive: the database the settings name, else SQLite beside the AOF
    database_url = settings.database_url
    if database_url is None:
        from service.store.database import default_url

        Path(data_dir).mkdir(parents=True, exist_ok=True)
        database_url = os.environ["LUDOTHEQUE_DATABASE_URL"] = default_url(data_dir)
    migrate_database(database_url)
    if settings.redis_url:
        run_servers(bot_workers, settings.stop_s)
        return
    with EmbeddedRedis(
        data_dir, appendfsync=settings.appendfsync, server=settings.redis_server
    ) as url:
        os.environ["REDIS_URL"] = url
        # where `ludotheque apps` and `players` find this Redis (their tokens live there too)
        (Path(data_dir) / REDIS_URL_FILE).write_text(url + "\n")
        if settings.record_key_file is None:  # records' key, kept beside the AOF
            from service.domain.signing import ensure_key_file

            os.environ["LUDOTHEQUE_RECORD_KEY_FILE"] = str(ensure_key_file(Path(data_dir)))
        run_servers(bot_workers, settings.stop_s)


def migrate_database(url: str) -> None:
    from service.store.database import migrate

    logging.getLogger(__name__).info("migrating the archive's database %s", shown_url(url))
    migrate(url)


def shown_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


@main.command("migrate")
@click.option(
    "--database-url",
    envvar="LUDOTHEQUE_DATABASE_URL",
    required=True,
    help="the database (default: $LUDOTHEQUE_DATABASE_URL)",
)
def migrate_command(database_url: str) -> None:
    """Create or update the archive's schema (Alembic migrations) in the
    database: from empty, or from any earlier revision; harmless when it is
    up to date. `serve` does it when it starts; elsewhere (gunicorn, the
    Helm chart) run it before starting the new version."""
    from service.store.database import current, engine_for, head

    migrate_database(database_url)
    engine = engine_for(database_url)
    click.echo(f"{shown_url(database_url)} is at revision {current(engine)} (head {head()})")
    engine.dispose()


def cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_servers(bot_workers: int, stop_s: float) -> None:
    """gunicorn and ``bot_workers`` bot workers, each a process of its own
    (gevent patches gunicorn before any import) in a session of its own, so
    that Ctrl-C reaches only this process, which stops them gracefully
    (SIGTERM) and waits for them, ``stop_s`` at most in all before it kills
    what is left (``LUDOTHEQUE_STOP_S``). The bot workers share one queue in Redis
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
    # each stops gracefully within its own bound (gunicorn's graceful_timeout,
    # a worker's STOP_S); one still running at the deadline is killed, so
    # that Ctrl-C always ends `serve`
    deadline = time.monotonic() + stop_s
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            logging.getLogger(__name__).warning(
                "%s did not stop within %.0f s of SIGTERM: killed", child.args[2:], stop_s
            )
            child.kill()
            child.wait()
    if code not in (0, -signal.SIGTERM):
        raise SystemExit(code)


@main.command()
@click.option(
    "--budget-ms",
    type=click.IntRange(1, 60_000),
    show_default="1000, or $LUDOTHEQUE_BOT_BUDGET_MS",
    help="thinking time per bot move",
)
@click.pass_obj
def worker(settings: Settings, budget_ms: int | None) -> None:
    """Play bot turns and expired turn clocks (REDIS_URL required)."""
    from service.background.worker import run_worker
    from service.observability import configure_logging

    def start() -> Flask:
        from service.app import create_app  # once SIGTERM is caught (run_worker)

        return create_app(settings=settings)

    configure_logging()
    budget_s = (budget_ms or settings.bot_budget_ms) / 1000
    run_worker(budget_s, start, delivery_settings(settings))


def delivery_settings(settings: Settings) -> DeliverySettings:
    """A worker's webhook deliveries, as its settings say (``LUDOTHEQUE_WEBHOOK_*``)."""

    from service.background.webhooks import DeliverySettings

    return DeliverySettings(
        give_up_s=settings.webhook_give_up_s,
        threads=settings.webhook_threads,
        retry_threads=settings.webhook_retry_threads,
        lease_s=settings.webhook_lease_s,
        in_flight=settings.webhook_calls,
    )


@main.command("settings")
@click.option("--markdown", is_flag=True, help="print docs/operators/configuration.md instead")
def show_settings(markdown: bool) -> None:
    """Check the settings the environment gives, as `serve` and `worker` do
    when they start (status 78 naming each malformed one); with --markdown,
    print the page that lists every setting."""
    if markdown:
        from service.settings.page import markdown as page

        click.echo(page(), nl=False)
        return
    load_or_exit()
    click.echo("every setting is well formed")


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
    app = create_app({"REDIS_URL": "redis://127.0.0.1:1/0", "DATABASE_URL": None})
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
        found = key or load_or_exit().record_key_file
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


def rfc3339_ms(text: str | None, option: str) -> int | None:
    """``--since``/``--until`` as ms (rounded up, as the API does)."""
    if text is None:
        return None
    import datetime

    from service.store.searches import ms_at

    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            "an RFC 3339 date-time, e.g. 2026-11-28T00:00:00Z", param_hint=option
        ) from None
    if moment.tzinfo is None:
        raise click.BadParameter("give the offset too (Z for UTC)", param_hint=option)
    return ms_at(moment)


@main.command()
@click.option(
    "--database-url",
    envvar="LUDOTHEQUE_DATABASE_URL",
    show_envvar=True,
    required=True,
    help="the archive's database",
)
@click.option("--game", help="only matches of this game")
@click.option("--bot", help="only matches in which a bot of this kind played")
@click.option("--player", help="only matches in which this player (its id) held a seat")
@click.option("--since", help="only matches that ended at or after this time (RFC 3339)")
@click.option("--until", help="only matches that ended before this time (RFC 3339)")
@click.option("--limit", type=click.IntRange(1), help="at most this many records")
@click.option("--output", type=click.File("wb"), default="-", help="write here (default: stdout)")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="count the records on stderr as they go (default: when stderr is a terminal)",
)
@click.option(
    "--every",
    type=click.IntRange(1),
    default=10_000,
    show_default=True,
    help="records between two progress lines",
)
def export(
    database_url: str,
    game: str | None,
    bot: str | None,
    player: str | None,
    since: str | None,
    until: str | None,
    limit: int | None,
    output: BinaryIO,
    progress: bool | None,
    every: int,
) -> None:
    """Write the signed records of finished matches from the archive, one per
    line (NDJSON), newest first, as GET /v1/matches/export does: the same
    filters, straight from the database. Each line, saved to a file of its
    own, is a record `ludotheque verify` checks."""
    from service.store.database import check_migrated, engine_for
    from service.store.searches import EXPORT_BATCH, Search, records

    if game is not None:
        from engines import GAMES

        if game not in GAMES:
            raise click.BadParameter(f"one of {', '.join(sorted(GAMES))}", param_hint="--game")
    if player is not None and not re.fullmatch(r"[0-9a-f]{32}", player):
        raise click.BadParameter("a player id: 32 hexadecimal digits", param_hint="--player")
    since_ms, until_ms = rfc3339_ms(since, "--since"), rfc3339_ms(until, "--until")
    search = Search(game, bot, since_ms, until_ms, player)
    if progress is None:
        progress = sys.stderr.isatty()
    logging.getLogger("alembic").setLevel(logging.WARNING)  # stderr is for progress here
    engine = engine_for(database_url, pool_size=1)
    check_migrated(engine)
    written = shown = 0
    for batch in records(engine, search, limit, batch=min(EXPORT_BATCH, every)):
        output.write(("\n".join(batch) + "\n").encode())
        written += len(batch)
        if progress and written - shown >= every:
            shown = written - written % every
            click.echo(f"{written} records", err=True)
    output.flush()
    if progress:
        click.echo(f"{written} records: done", err=True)
    engine.dispose()


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
@click.option("--game", help="the match's game (not with --queue)")
@click.option("--match", "match_id", help="the match to play (not with --queue)")
@click.option(
    "--queue",
    "queue_game",
    help="play ranked matches of this game one after another, from its queue, until stopped "
    "(a player token; Ctrl-C leaves the queue)",
)
@click.option("--preset", help="with --queue: the queue's preset (default: its first)")
@click.option(
    "--matches",
    "ranked",
    type=click.IntRange(1),
    help="with --queue: stop after this many matches",
)
@click.option(
    "--token",
    required=True,
    help="the seat's token, or a player's (a bot account's: ldq_player_…)",
)
@click.option(
    "--seat",
    type=click.IntRange(0),
    help="first take this open seat, as the player whose token --token is",
)
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
    url: str,
    game: str | None,
    match_id: str | None,
    queue_game: str | None,
    preset: str | None,
    ranked: int | None,
    token: str,
    seat: int | None,
    policy: str,
    budget_ms: int,
    rematches: int,
) -> None:
    """Play one seat through the public HTTP API until the match ends (one
    outcome per line, one line per match played); with --queue, ranked
    matches from the game's queue, one after another."""
    from service.botclient import BotClient, Ladder

    if queue_game is not None:
        ladder = Ladder(url, queue_game, token, preset, policy, budget_ms / 1000)
        try:
            for outcome in ladder.run(ranked):
                click.echo(json.dumps(outcome))
        except KeyboardInterrupt:
            ladder.leave()
            click.echo("left the queue", err=True)
        return
    if game is None or match_id is None:
        raise click.UsageError("--game and --match, or --queue")
    client = BotClient(url, game, match_id, token, policy, budget_ms / 1000, rematches=rematches)
    if seat is not None:
        client.join(seat)
    for outcome in client.run_series():
        click.echo(json.dumps(outcome))


# -- apps and players: the operator's ----------------------------------------------
def operator_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options of every command that changes players or apps: their
    database and the Redis every token is checked from."""
    command = click.option(
        "--data-dir",
        default="data",
        show_default=True,
        type=click.Path(file_okay=False),
        help="`serve`'s data directory: its SQLite database and its embedded Redis, unless "
        "LUDOTHEQUE_DATABASE_URL or REDIS_URL say otherwise",
    )(command)
    command = click.option(
        "--redis-url", envvar="REDIS_URL", show_envvar=True, help="the service's Redis"
    )(command)
    return click.option(
        "--database-url",
        envvar="LUDOTHEQUE_DATABASE_URL",
        show_envvar=True,
        help="the service's database",
    )(command)


def operator_players(database_url: str | None, redis_url: str | None, data_dir: str) -> Players:
    """The service's players and apps, in its database and its Redis."""
    import redis

    from service.store.database import check_migrated, default_url, engine_for
    from service.store.players import Players

    if database_url is None:
        database_url = default_url(data_dir)
        if not Path(data_dir, "ludotheque.db").exists():
            raise click.UsageError("no database: give --database-url, or `serve`'s --data-dir")
    if redis_url is None:
        kept = Path(data_dir) / REDIS_URL_FILE
        if not kept.exists():
            raise click.UsageError(
                "no Redis: give --redis-url (REDIS_URL), or run this while `serve` runs with "
                "the same --data-dir"
            )
        redis_url = kept.read_text().strip()
    engine = engine_for(database_url)
    logging.getLogger("alembic").setLevel(logging.WARNING)  # its context's lines are noise here
    try:
        check_migrated(engine)
    except Exception as failed:
        raise click.ClickException(str(failed)) from None
    return Players(engine, redis.Redis.from_url(redis_url), load_or_exit(()).player_token_ttl)


LIMIT_OPTIONS = (
    ("--requests", str, "requests per unit of time, e.g. '12000/minute'"),
    ("--creations", str, "match and player creations, e.g. '600/minute;6000/hour'"),
    ("--waiting", click.IntRange(0), "matches waiting for players at once"),
    ("--followers", click.IntRange(0), "open event streams and long polls at once"),
    ("--bot-seats", click.IntRange(0), "server bot seats in live matches at once"),
)


def limit_options(command: Callable[..., None]) -> Callable[..., None]:
    for flag, kind, about in reversed(LIMIT_OPTIONS):
        command = click.option(flag, type=kind, help=about)(command)
    return command


def set_limits(**given: Any) -> dict[str, Any]:
    """The quotas given on the command line, checked (unset ones left out)."""
    from limits import parse_many

    for name in ("requests", "creations"):
        if given.get(name) is not None:
            try:
                parse_many(given[name])
            except ValueError:
                raise click.BadParameter(
                    "e.g. '600/minute;6000/hour'", param_hint=f"--{name}"
                ) from None
    return {k: v for k, v in given.items() if v is not None}


@main.group()
def apps() -> None:
    """Register the apps that vouch for their users (server to server), their
    keys and their quotas. Each key is printed once: keep it secret."""


@apps.command("create")
@click.argument("name")
@limit_options
@operator_options
def apps_create(
    name: str, database_url: str | None, redis_url: str | None, data_dir: str, **limits: Any
) -> None:
    """Register the app NAME: prints its id and its first key (slot 1), once.
    Unset quotas are those of one client address."""
    players = operator_players(database_url, redis_url, data_dir)
    app_id, key = players.create_app(name, set_limits(**limits))
    click.echo(f"app {app_id}")
    click.echo(f"key {key}")


@apps.command("list")
@operator_options
def apps_list(database_url: str | None, redis_url: str | None, data_dir: str) -> None:
    """Every app: id, name, key slots in use, quotas, revoked or not (never a key)."""
    for app in operator_players(database_url, redis_url, data_dir).list_apps():
        click.echo(json.dumps(app))


@apps.command("key")
@click.argument("app_id")
@click.option("--slot", type=click.Choice(["1", "2"]), required=True, help="the slot to (re)fill")
@operator_options
def apps_key(
    app_id: str, slot: str, database_url: str | None, redis_url: str | None, data_dir: str
) -> None:
    """A new key in SLOT of the app, printed once; the key that was there
    ends, the other slot's keeps working. To rotate: make the new key in the
    free slot, move the app to it, then revoke the old slot."""
    players = operator_players(database_url, redis_url, data_dir)
    try:
        click.echo(f"key {players.new_key(app_id, int(slot))}")
    except LookupError as missing:
        raise click.ClickException(str(missing)) from None


@apps.command("revoke")
@click.argument("app_id")
@click.option("--slot", type=click.Choice(["1", "2"]), help="end only this key")
@operator_options
def apps_revoke(
    app_id: str, slot: str | None, database_url: str | None, redis_url: str | None, data_dir: str
) -> None:
    """End one key of the app (--slot), or the app itself: both keys and every
    token of its players. At once, on every server process."""
    players = operator_players(database_url, redis_url, data_dir)
    try:
        players.revoke_app(app_id, None if slot is None else int(slot))
    except LookupError as missing:
        raise click.ClickException(str(missing)) from None
    click.echo(f"revoked {'key ' + slot + ' of ' if slot else ''}app {app_id}")


@apps.command("limits")
@click.argument("app_id")
@limit_options
@operator_options
def apps_limits(
    app_id: str, database_url: str | None, redis_url: str | None, data_dir: str, **limits: Any
) -> None:
    """Set some of the app's quotas (seen by every process within 5 s); prints them all."""
    players = operator_players(database_url, redis_url, data_dir)
    try:
        click.echo(json.dumps(players.set_limits(app_id, set_limits(**limits))))
    except LookupError as missing:
        raise click.ClickException(str(missing)) from None


@apps.command("webhook")
@click.argument("app_id")
@click.option("--url", help="where its players' ticket_matched and rated events are POSTed")
@click.option("--off", is_flag=True, help="send them nowhere any more")
@operator_options
def apps_webhook(
    app_id: str,
    url: str | None,
    off: bool,
    database_url: str | None,
    redis_url: str | None,
    data_dir: str,
) -> None:
    """Send the events of the app's players (a ticket matched, a rating
    changed) to URL, signed: prints the signing secret (whsec_...) once; a
    new URL, a new secret. --off: no more. Workers see it within seconds."""
    from service.background import outbound

    if off == (url is not None):
        raise click.UsageError("give --url URL or --off")
    if url is not None:
        outbound.configure(load_or_exit(()).outbound_allow, outbound.concurrency)
        try:
            outbound.check_url(url)
            outbound.check_literal(url)
        except outbound.Refused as refused:
            raise click.BadParameter(str(refused), param_hint="--url") from None
    players = operator_players(database_url, redis_url, data_dir)
    try:
        secret = players.set_webhook(app_id, url)
    except LookupError as missing:
        raise click.ClickException(str(missing)) from None
    click.echo(f"webhook {url}" if secret else f"webhook off for app {app_id}")
    if secret:
        click.echo(f"secret {secret}")


@main.group("players")
def players_group() -> None:
    """The operator's players: bot accounts."""


@players_group.command("create")
@click.argument("name")
@click.option("--bot", is_flag=True, help="a bot account (shown as a bot everywhere)")
@operator_options
def players_create(
    name: str, bot: bool, database_url: str | None, redis_url: str | None, data_dir: str
) -> None:
    """A player named NAME (a bot account with --bot): prints its id and its
    first token, once (`ludotheque bot --token` plays with it)."""
    players = operator_players(database_url, redis_url, data_dir)
    player, token = players.create(name, bot)
    click.echo(f"player {player['id']}")
    click.echo(f"token {token}")


if __name__ == "__main__":
    main()
