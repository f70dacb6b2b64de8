"""The table of every setting: ``Settings``, one field per variable, with
its default, what it accepts (``service.settings.kinds``), what it means and
the app's config key for it."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from service.background.outbound import DEFAULT_CONCURRENCY, Allowed
from service.settings.kinds import (
    BIND,
    DATABASE_URL,
    DIRECTORY,
    FLAG,
    METRICS_BIND,
    ORIGINS,
    OUTBOUND_ALLOW,
    PROGRAM,
    RATE_LIMITS,
    READABLE_FILE,
    REDIS_URL,
    Kind,
    choice,
    seconds,
    whole,
)
from service.settings.presets import QUEUE_PRESETS


def setting(
    variable: str,
    default: Any,
    kind: Kind,
    about: str,
    *,
    group: str,
    config: str | None = None,
    shown: str | None = None,
) -> Any:
    """A field of ``Settings``: read from ``variable``; ``config``, the app's
    Flask config key (``create_app``'s overrides use it); ``shown``, the
    default as the docs say it, if not the value itself."""
    return field(
        default=default,
        metadata={
            "variable": variable,
            "kind": kind,
            "about": about,
            "group": group,
            "config": config,
            "shown": shown,
        },
    )


STORE = "The store"
MATCHES = "Matches"
CLIENTS = "Per client: quotas, proxies, browsers"
LIVE = "Live play"
BOTS = "Bots"
OUTBOUND = "Webhooks and HTTP bots: outbound calls"
SERVER = "The server processes"


@dataclass(frozen=True)
class Settings:
    """Every setting, as a process read it when it started."""

    redis_url: str | None = setting(
        "REDIS_URL",
        None,
        REDIS_URL,
        "the Redis to keep matches in",
        group=STORE,
        config="REDIS_URL",
        shown="(`serve`: its embedded Redis; required elsewhere, in the image too)",
    )
    redis_cluster: bool = setting(
        "REDIS_CLUSTER",
        False,
        FLAG,
        "1: use redis-py's cluster client, `REDIS_URL` naming any node",
        group=STORE,
        config="REDIS_CLUSTER",
    )
    redis_max_connections: int = setting(
        "LUDOTHEQUE_REDIS_MAX_CONNECTIONS",
        16,
        whole(1),
        "Redis connections per process (per node on a cluster); requests wait for a free one",
        group=STORE,
        config="REDIS_MAX_CONNECTIONS",
    )
    redis_min_replicas: int = setting(
        "LUDOTHEQUE_REDIS_MIN_REPLICAS",
        0,
        whole(0),
        "N: a write is confirmed only once N replicas have it (`WAIT`), else 503",
        group=STORE,
        config="REDIS_MIN_REPLICAS",
    )
    redis_replicas_timeout_ms: int = setting(
        "LUDOTHEQUE_REDIS_REPLICAS_TIMEOUT_MS",
        1000,
        whole(1),  # WAIT with a timeout of 0 would wait for ever
        "how long a write waits for those replicas",
        group=STORE,
        config="REDIS_REPLICAS_TIMEOUT_MS",
    )
    appendfsync: str = setting(
        "LUDOTHEQUE_APPENDFSYNC",
        "always",
        choice("always", "everysec", "no"),
        "`ludotheque serve` without `REDIS_URL`: the embedded Redis' `appendfsync`. `always` "
        "fsyncs every write before Redis answers it, so a crash of Redis, of `serve` or of "
        "the machine loses nothing confirmed; `everysec`: a crash of the machine loses up to "
        "the last 1 to 2 s (of Redis alone, nothing unless the disk stalled); `no`: as the "
        "operating system flushes (about 30 s on Linux)",
        group=STORE,
    )
    redis_server: str | None = setting(
        "LUDOTHEQUE_REDIS_SERVER",
        None,
        PROGRAM,
        "the program `ludotheque serve` runs as its embedded Redis",
        group=STORE,
        shown="(`redis-server`, `valkey-server` on the PATH, else the bundled one)",
    )

    database_url: str | None = setting(
        "LUDOTHEQUE_DATABASE_URL",
        None,
        DATABASE_URL,
        "the SQL database that keeps what must outlive Redis: every finished match (its "
        "signed record and final state), searchable at `GET /v1/matches`. The worker "
        "processes archive each match as it ends, and Redis forgets it only once archived "
        "(`LUDOTHEQUE_FINISHED_TTL` later). `ludotheque migrate` creates or updates its "
        "schema (`serve` does it at start). Unset outside `serve`: nothing is archived, "
        "and a finished match is readable for `LUDOTHEQUE_FINISHED_TTL` only",
        group=STORE,
        config="DATABASE_URL",
        shown="(`serve`: SQLite in its data directory, `<data-dir>/ludotheque.db`)",
    )
    finished_ttl: int = setting(
        "LUDOTHEQUE_FINISHED_TTL",
        24 * 3600,
        whole(1),
        "seconds a finished match stays in Redis (once archived, when there is a database)",
        group=MATCHES,
        config="FINISHED_TTL",
    )
    archive_lease_s: float = setting(
        "LUDOTHEQUE_ARCHIVE_LEASE_S",
        30.0,
        seconds(positive=True),
        "a finished match taken for archiving by a worker that died is taken over after this "
        "long (archiving one takes milliseconds)",
        group=MATCHES,
        config="ARCHIVE_LEASE_S",
    )
    leaderboard_min_matches: int = setting(
        "LUDOTHEQUE_LEADERBOARD_MIN_MATCHES",
        5,
        whole(1),
        "rated matches of a game a player must have played to be listed on its leaderboard",
        group=MATCHES,
        config="LEADERBOARD_MIN_MATCHES",
    )
    idle_ttl: int = setting(
        "LUDOTHEQUE_IDLE_TTL",
        7 * 24 * 3600,
        whole(1),
        "seconds an untouched match lives",
        group=MATCHES,
        config="IDLE_TTL",
    )
    waiting_ttl: int = setting(
        "LUDOTHEQUE_WAITING_TTL",
        3600,
        whole(1),
        "seconds a waiting match (an open seat) lives unless someone joins",
        group=MATCHES,
        config="WAITING_TTL",
    )
    idempotency_ttl: int = setting(
        "LUDOTHEQUE_IDEMPOTENCY_TTL",
        24 * 3600,
        whole(1),
        "seconds an `Idempotency-Key` is remembered",
        group=MATCHES,
        config="IDEMPOTENCY_TTL",
    )
    max_body_bytes: int = setting(
        "LUDOTHEQUE_MAX_BODY_BYTES",
        64 * 1024,
        whole(1),
        "larger request bodies get 413",
        group=MATCHES,
        config="MAX_CONTENT_LENGTH",
    )
    record_key_file: str | None = setting(
        "LUDOTHEQUE_RECORD_KEY_FILE",
        None,
        READABLE_FILE,
        "a file holding the Ed25519 private key that signs match records, PKCS#8 PEM "
        "(`openssl genpkey -algorithm ed25519 -out record-key.pem`): supply it as a secret "
        "(a mounted file), the same to every API process; a file that cannot be read stops "
        "the start. Without it, the first process to serve a record creates a key in Redis "
        "(`ludotheque:record-key`) and every process on that store uses it, with a warning "
        "in the log: anyone who reads the store can then sign. Its public half: "
        "`GET /v1/record-key` (docs/clients/fairness.md)",
        group=MATCHES,
        config="RECORD_KEY_FILE",
        shown="(`serve` with its embedded Redis: `<data-dir>/record-key.pem`, created with "
        "mode 0600; else a key kept in the store)",
    )
    queue_presets: str | None = setting(
        "LUDOTHEQUE_QUEUE_PRESETS",
        None,
        QUEUE_PRESETS,
        "the ranked queue's presets per game: players, options (the match options), "
        "`turn_timeout_s`, `bot_after_s` (null: never bots); see `docs/clients/queue.md`",
        group=MATCHES,
        config="QUEUE_PRESETS",
        shown="(each game, each player count n from 2: preset `<n>p`, default options, a 60 s "
        "turn clock, no bots)",
    )

    rate_limits: bool = setting(
        "LUDOTHEQUE_RATE_LIMITS",
        True,
        FLAG,
        "0 turns rate limiting off",
        group=CLIENTS,
        config="RATELIMIT_ENABLED",
    )
    rate_limit_per_address: str = setting(
        "LUDOTHEQUE_RATE_LIMIT_PER_ADDRESS",
        "30000/minute",
        RATE_LIMITS,
        "requests per client address",
        group=CLIENTS,
        config="RATE_LIMIT_PER_ADDRESS",
    )
    rate_limit_per_token: str = setting(
        "LUDOTHEQUE_RATE_LIMIT_PER_TOKEN",
        # a bot playing a full match at full speed with the recommended loop (docs/clients/api.md)
        "15000/minute",
        RATE_LIMITS,
        "requests per seat token",
        group=CLIENTS,
        config="RATE_LIMIT_PER_TOKEN",
    )
    rate_limit_create: str = setting(
        "LUDOTHEQUE_RATE_LIMIT_CREATE",
        "60/minute;600/hour",
        RATE_LIMITS,
        "match creations per client address",
        group=CLIENTS,
        config="RATE_LIMIT_CREATE",
    )
    max_waiting_per_address: int = setting(
        "LUDOTHEQUE_MAX_WAITING_PER_ADDRESS",
        20,
        whole(0),
        "waiting matches (open seats) one address may have at once",
        group=CLIENTS,
        config="MAX_WAITING_PER_ADDRESS",
    )
    player_token_ttl: int = setting(
        "LUDOTHEQUE_PLAYER_TOKEN_TTL",
        30 * 24 * 3600,
        whole(60),
        "seconds a player token (`ldq_player_…`) works; before then its device asks for a "
        "new one with it (`POST /v1/players/me/tokens`)",
        group=CLIENTS,
        config="PLAYER_TOKEN_TTL",
    )
    bot_seats_per_address: int = setting(
        "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS",
        12,
        whole(0),
        "live bot seats per creating address (0: no cap); past it, 429",
        group=CLIENTS,
        config="BOT_SEATS_PER_ADDRESS",
    )
    trusted_proxies: int = setting(
        "LUDOTHEQUE_TRUSTED_PROXIES",
        0,
        whole(0),
        "proxies in front whose `X-Forwarded-For` gives the client address (the Helm chart "
        'sets it with its Ingress: `docs/operators/deploy.md`, "Behind a proxy")',
        group=CLIENTS,
        config="TRUSTED_PROXIES",
    )
    cors_origins: tuple[str, ...] = setting(
        "LUDOTHEQUE_CORS_ORIGINS",
        (),
        ORIGINS,
        "the origins to narrow CORS to",
        group=CLIENTS,
        config="CORS_ORIGINS",
        shown="(none: any origin, `*`)",
    )

    sse_keepalive_s: float = setting(
        "LUDOTHEQUE_SSE_KEEPALIVE_S",
        10.0,
        seconds(positive=True),
        "an event stream with nothing sent for this many seconds sends a keep-alive comment "
        "(and looks whether its client has gone)",
        group=LIVE,
        config="SSE_KEEPALIVE_S",
    )
    stream_max_s: float = setting(
        "LUDOTHEQUE_STREAM_MAX_S",
        600.0,
        seconds(positive=True),
        "an event stream ends after this long; the client resumes",
        group=LIVE,
        config="STREAM_MAX_S",
    )
    stream_ticket_ttl: int = setting(
        "LUDOTHEQUE_STREAM_TICKET_TTL",
        60,
        whole(1),
        "seconds a stream ticket may wait for its first use",
        group=LIVE,
        config="STREAM_TICKET_TTL",
    )
    followers_per_address: int = setting(
        "LUDOTHEQUE_FOLLOWERS_PER_ADDRESS",
        200,
        whole(0),
        "open streams and long polls per client address (`docs/clients/live.md`; 0: no cap)",
        group=LIVE,
        config="FOLLOWERS_PER_ADDRESS",
    )
    followers_per_token: int = setting(
        "LUDOTHEQUE_FOLLOWERS_PER_TOKEN",
        8,
        whole(0),
        "open streams and long polls per seat token (0: no cap)",
        group=LIVE,
        config="FOLLOWERS_PER_TOKEN",
    )
    followers_per_process: int = setting(
        "LUDOTHEQUE_FOLLOWERS_PER_PROCESS",
        3500,
        whole(0),
        "open streams and long polls per API process, leaving room for other requests (0: no cap)",
        group=LIVE,
        config="FOLLOWERS_PER_PROCESS",
    )
    exports_per_address: int = setting(
        "LUDOTHEQUE_EXPORTS_PER_ADDRESS",
        1,
        whole(1),
        "`GET /v1/matches/export` streams at once per client address, per API process "
        "(more: 429 `too_many_exports`)",
        group=CLIENTS,
        config="EXPORTS_PER_ADDRESS",
    )
    exports_per_process: int = setting(
        "LUDOTHEQUE_EXPORTS_PER_PROCESS",
        4,
        whole(1),
        "`GET /v1/matches/export` streams at once per API process, whoever asks",
        group=CLIENTS,
        config="EXPORTS_PER_PROCESS",
    )
    export_stall_s: int = setting(
        "LUDOTHEQUE_EXPORT_STALL_S",
        30,
        whole(1),
        "an export whose client takes none of its bytes for this long is cut off, and its "
        "slots given back (under gunicorn, as `serve` runs it)",
        group=CLIENTS,
        config="EXPORT_STALL_S",
    )

    bot_budget_ms: int = setting(
        "LUDOTHEQUE_BOT_BUDGET_MS",
        1000,
        whole(1, 60_000),
        "thinking time per bot move (`ludotheque worker`; its `--budget-ms` wins)",
        group=BOTS,
    )
    bot_match_budget_s: float = setting(
        "LUDOTHEQUE_BOT_MATCH_BUDGET_S",
        600.0,
        seconds(positive=False),
        "thinking time of a match's bots in all; then they play `random`",
        group=BOTS,
        config="BOT_MATCH_BUDGET_S",
    )

    outbound_allow: Allowed = setting(  # noqa: RUF009 - a field(), as every other
        "LUDOTHEQUE_OUTBOUND_ALLOW",
        Allowed(),
        OUTBOUND_ALLOW,
        "`http` allows plain-http webhook and bot URLs; an address or network is called "
        "although internal (docs/clients/webhooks.md)",
        group=OUTBOUND,
        config="OUTBOUND_ALLOW",
        shown="(none)",
    )
    outbound_concurrency: int = setting(
        "LUDOTHEQUE_OUTBOUND_CONCURRENCY",
        DEFAULT_CONCURRENCY,
        whole(1),
        "outbound calls (webhooks, HTTP bots) in flight per process, at most",
        group=OUTBOUND,
        config="OUTBOUND_CONCURRENCY",
    )
    webhook_give_up_s: float = setting(
        "LUDOTHEQUE_WEBHOOK_GIVE_UP_S",
        24 * 3600.0,
        seconds(positive=True),
        "a webhook receiver failing this long in a row is given up on",
        group=OUTBOUND,
    )
    webhook_threads: int = setting(
        "LUDOTHEQUE_WEBHOOK_THREADS",
        2,
        whole(1),
        "threads taking webhook deliveries from the first lane per `ludotheque worker` "
        "(each may hold a Redis connection)",
        group=OUTBOUND,
    )
    webhook_retry_threads: int = setting(
        "LUDOTHEQUE_WEBHOOK_RETRY_THREADS",
        1,
        whole(1),
        "and from the retry lane (failed or slow receivers)",
        group=OUTBOUND,
    )
    webhook_calls: int = setting(
        "LUDOTHEQUE_WEBHOOK_CALLS",
        64,
        whole(1),
        "webhook calls in flight per `ludotheque worker`, one per receiver at a time (threads "
        "that only do HTTP; a call not answered in 0.25 s goes on there while the lane moves "
        "on)",
        group=OUTBOUND,
    )
    webhook_lease_s: float = setting(
        "LUDOTHEQUE_WEBHOOK_LEASE_S",
        60.0,
        seconds(positive=True),
        "a delivery claimed by a worker that died comes due again after this long (keep it "
        "above two delivery timeouts, 10 s)",
        group=OUTBOUND,
    )

    bind: str = setting(
        "LUDOTHEQUE_BIND",
        "127.0.0.1:8000",
        BIND,
        "gunicorn's address (`serve` sets it from `--host`/`--port`)",
        group=SERVER,
    )
    workers: int = setting(
        "LUDOTHEQUE_WORKERS",
        1,
        whole(1),
        "gunicorn worker processes (`serve --workers`)",
        group=SERVER,
    )
    worker_connections: int = setting(
        "LUDOTHEQUE_WORKER_CONNECTIONS",
        4000,
        whole(1),
        "concurrent connections per gunicorn (gevent) worker; the open-file limit is raised "
        "to match",
        group=SERVER,
    )
    worker_tmp_dir: str | None = setting(
        "LUDOTHEQUE_WORKER_TMP_DIR",
        None,
        DIRECTORY,
        "an existing directory for gunicorn's worker heartbeat files (the container and the "
        "chart: `/tmp`)",
        group=SERVER,
        shown="(gunicorn's)",
    )
    stop_s: float = setting(
        "LUDOTHEQUE_STOP_S",
        20.0,
        seconds(positive=True),
        "once Ctrl-C or SIGTERM stops `ludotheque serve`, how long its servers have in all to "
        "stop gracefully before it kills them (gunicorn's graceful timeout is 10 s)",
        group=SERVER,
    )
    keepalive_s: int = setting(
        "LUDOTHEQUE_KEEPALIVE_S",
        5,
        whole(0),
        "seconds gunicorn keeps an idle connection for the client's next request (behind a "
        "proxy that keeps its connections to the server, set it above the proxy's idle "
        "timeout: nginx's `upstream-keepalive-timeout` is 60)",
        group=SERVER,
    )
    log_level: str = setting(
        "LUDOTHEQUE_LOG_LEVEL",
        "info",
        choice("debug", "info", "warning", "error", "critical"),
        "log level",
        group=SERVER,
    )
    metrics_bind: str = setting(
        "LUDOTHEQUE_METRICS_BIND",
        "",
        METRICS_BIND,
        "`host:port` serving `/metrics` apart from the API (the image: `0.0.0.0:9100`); see "
        "`docs/operators/public-service.md`",
        group=SERVER,
        config="METRICS_BIND",
        shown="(none: on the API)",
    )
    prometheus_multiproc_dir: str | None = setting(
        "PROMETHEUS_MULTIPROC_DIR",
        None,
        DIRECTORY,
        "where gunicorn workers share their metrics (prometheus-client's own variable)",
        group=SERVER,
        config="PROMETHEUS_MULTIPROC_DIR",
        shown="(a temporary folder, removed when gunicorn stops)",
    )

    def flask_config(self) -> dict[str, Any]:
        """The app's config keys and their values (``create_app``)."""
        config = {
            f.metadata["config"]: getattr(self, f.name)
            for f in fields(self)
            if f.metadata["config"]
        }
        config["CORS_ORIGINS"] = list(self.cors_origins)
        return config
