"""The archive's search and export at scale (issue 35; not a test; loopback only).

Makes a PostgreSQL database of its own (``--admin-url``), migrates it, fills
it with ``--records`` finished matches in server-side SQL (``INSERT ...
SELECT ... FROM generate_series``, in chunks, with progress): all four
games, a mix of bot kinds (none, one, two) and names, ended over a year,
each with a fixed-size record blob of a real record's shape; then VACUUM
ANALYZE, as autovacuum would leave an archive. It serves the app under
gunicorn (the production configuration, one gevent worker, rate limits off)
on a private Redis, and times, through HTTP on a kept connection, ``--repeat``
pages of each kind:

- ``first``: the first page, no filter;
- ``game``: the first page of one game (the four in turn);
- ``bot``: the first page of one bot kind (the three in turn);
- ``game_bot``: the first page of one game and one bot kind;
- ``range``: the first page of a 30-day window (its start in turn);
- ``deep``: pages ``--deep`` pages in (following ``next`` there first), no filter;
- ``deep_bot``: the same, by bot kind (``mcts``).

Each kind's query plan (EXPLAIN ANALYZE of the page's query) is checked:
an index walked in order, no sort, at most limit+1 rows read from it.

Then it exports ``--export`` records (``GET /v1/matches/export``) while
sampling the gunicorn worker's RSS every 20 ms: its growth over the export
must stay flat (the records go through in batches of 500).

Figures: p50/p99 per kind, the plans' index and rows, the export's rate and
RSS growth; written to ``bench/results/archive.json`` (``bench.results``)
and printed as a table. The database is dropped at the end (``--keep`` keeps
it, and prints its URL).

    python -m bench.archive --records 1000000      # the reference run
    python -m bench.archive --records 2000         # quick: well under a minute
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import requests
import sqlalchemy as sa

from bench import results
from bench.load import GUNICORN_CONF, HOST, redis_server, serving
from service.store.database import engine_for, migrate
from service.store.embedded import free_port
from service.store.searches import Search, decode_cursor, page_query

ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
GAMES = ["dekal", "pacal", "gaudi", "ducale"]
BOTS = ["random", "greedy", "mcts"]
YEAR_MS = 365 * 86_400_000
END_MS = 1_795_000_000_000  # the newest end (2026-11-17); the oldest a year before
CHUNK = 100_000
KINDS = ["first", "game", "bot", "game_bot", "range", "deep", "deep_bot"]
TARGET_P99_MS = 20

# One statement per chunk of rows [lo, hi]: a CTE referenced twice is
# materialised, so a match's bots (drawn at random) are the same in both tables.
FILL = """
WITH src AS (
    SELECT g,
           md5('ldq-' || g) AS id,
           (ARRAY['dekal','pacal','gaudi','ducale'])[1 + floor(random() * 4)::int] AS game,
           :end_ms - floor(random() * :span)::bigint AS ended_ms,
           floor(random() * 6)::int AS mix
    FROM generate_series(CAST(:lo AS bigint), CAST(:hi AS bigint)) AS g
), kinds AS (
    SELECT src.*,
           CASE mix WHEN 0 THEN ARRAY[]::text[] WHEN 1 THEN ARRAY['random']
                    WHEN 2 THEN ARRAY['greedy'] WHEN 3 THEN ARRAY['mcts']
                    WHEN 4 THEN ARRAY['mcts','random'] ELSE ARRAY['greedy','random'] END AS bots
    FROM src
), inserted AS (
    INSERT INTO matches (id, game, created_ms, ended_ms, archived_ms, version, seeded,
                         seats, outcome, final, record)
    SELECT id, game, ended_ms - 60000 - (g % 3600) * 1000, ended_ms, ended_ms + 800,
           40 + g % 300, g % 25 = 0,
           '[{"seat":0,"name":"Player ' || (g % 9973) || '","bot":null}'
             || coalesce((SELECT string_agg(format(',{"seat":%s,"name":null,"bot":"%s"}',
                                                   n, kind), '' ORDER BY n)
                          FROM unnest(bots) WITH ORDINALITY AS b(kind, n)), '')
             || ']',
           format('{"winners":[%s],"scores":[%s,%s],"ranking":[[%s]],"seeded":%s,'
                  '"seed":%s,"salt":"%s"}', g % 2, 40 + g % 17, 30 + g % 23, g % 2,
                  CASE WHEN g % 25 = 0 THEN 'true' ELSE 'false' END, g * 7919, md5(id) || md5(id)),
           format('{"id":"%s","game":"%s","status":"finished","version":%s}',
                  id, game, 40 + g % 300),
           format('{"format":"ludotheque-record/1","id":"%s","game":"%s","options":{},'
                  '"seats":[{"seat":0,"name":"Player %s","bot":null}],"seeded":false,'
                  '"seed":%s,"salt":"%s","seed_commitment":"%s","actions":[%s],'
                  '"endings":[],"outcome":{"winners":[0]},'
                  '"signature":{"algorithm":"Ed25519","key_id":"%s","value":"%s"}}',
                  id, game, g % 9973, g * 7919, md5(id) || md5(id), md5(id || 'c') || md5(id),
                  rtrim(repeat('{"seat":0,"action":{"type":"reveal","row":1,"col":2}},', 40),
                        ','),
                  left(md5('key'), 16), repeat(md5(id || 's'), 4))
    FROM kinds
)
INSERT INTO match_bots (match_id, bot, game, ended_ms)
SELECT id, kind, game, ended_ms FROM kinds CROSS JOIN LATERAL unnest(bots) AS kind
"""


def out(*parts: object) -> None:
    print(*parts, flush=True)


@contextlib.contextmanager
def bench_database(admin_url: str, keep: bool) -> Iterator[str]:
    """A database of its own on the server of ``admin_url``; dropped after unless ``keep``."""
    name = f"ldq_bench_{uuid.uuid4().hex[:10]}"
    admin = engine_for(admin_url).execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    url = admin_url.rsplit("/", 1)[0] + f"/{name}"
    try:
        yield url
    finally:
        if keep:
            out(f"kept: {url}")
        else:
            with admin.connect() as connection:
                connection.execute(sa.text(f"DROP DATABASE {name} WITH (FORCE)"))
        admin.engine.dispose()


def fill(url: str, records: int) -> dict[str, Any]:
    """``records`` matches, in chunks, then VACUUM ANALYZE; the time it took."""
    engine = engine_for(url)
    started = time.monotonic()
    statement = sa.text(FILL.replace('":', '"\\:'))  # a JSON key's colon is no bind parameter
    for lo in range(1, records + 1, CHUNK):
        hi = min(records, lo + CHUNK - 1)
        with engine.begin() as connection:
            connection.execute(statement, {"lo": lo, "hi": hi, "end_ms": END_MS, "span": YEAR_MS})
        out(f"  filled {hi:,} / {records:,} ({time.monotonic() - started:.0f} s)")
    filled = time.monotonic() - started
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
        connection.execute(sa.text("VACUUM ANALYZE matches"))
        connection.execute(sa.text("VACUUM ANALYZE match_bots"))
        counts = connection.execute(
            sa.text(
                "SELECT (SELECT count(*) FROM matches), (SELECT count(*) FROM match_bots), "
                "pg_size_pretty(pg_database_size(current_database()))"
            )
        ).one()
    engine.dispose()
    out(f"  {counts[0]:,} matches, {counts[1]:,} bot rows, {counts[2]} (VACUUM ANALYZE done)")
    return {
        "fill_s": round(filled, 1),
        "vacuum_analyze_s": round(time.monotonic() - started - filled, 1),
        "matches": counts[0],
        "match_bots": counts[1],
        "database_size": counts[2],
    }


def served_app() -> Any:
    """The app as gunicorn serves it here: create_app's, with the archive of
    LUDOTHEQUE_DATABASE_URL held as ``ludotheque.archive`` if create_app
    does not hold it yet."""
    from service.app import create_app
    from service.store.archive import Archive

    app = create_app()
    if app.extensions.get("ludotheque.archive") is None:
        app.extensions["ludotheque.archive"] = Archive(engine_for(app.config["DATABASE_URL"]))
    return app


def rfc3339(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms // 1000))


class Pages:
    """The page requests of each kind, over one kept connection."""

    def __init__(self, base: str, limit: int, deep: int) -> None:
        self.base, self.limit, self.deep = base, limit, deep
        self.http = requests.Session()
        self.deep_cursors: dict[str, str | None] = {}
        self.walking: dict[str, str | None] = {}

    def get(self, params: dict[str, Any]) -> dict[str, Any]:
        answer = self.http.get(f"{self.base}/v1/matches", params={"limit": self.limit, **params})
        if answer.status_code != 200:
            raise SystemExit(f"{answer.status_code}: {answer.text}")
        return answer.json()

    def query(self, kind: str, n: int) -> dict[str, Any]:
        """The n-th request of ``kind``'s arguments (a deep kind: the next page)."""
        if kind == "first":
            return {}
        if kind == "game":
            return {"game": GAMES[n % 4]}
        if kind == "bot":
            return {"bot": BOTS[n % 3]}
        if kind == "game_bot":
            return {"game": GAMES[n % 4], "bot": BOTS[n % 3]}
        if kind == "range":
            start = END_MS - YEAR_MS + (n * 7 % 300) * 86_400_000
            return {"since": rfc3339(start), "until": rfc3339(start + 30 * 86_400_000)}
        filters = {"bot": "mcts"} if kind == "deep_bot" else {}
        cursor = self.walking.get(kind) or self.deep_cursors[kind]
        return {**filters, **({"cursor": cursor} if cursor else {})}

    def go_deep(self, kind: str) -> int:
        """Follow ``next`` ``deep`` pages in (fewer when the search has fewer
        pages: half of them), and keep the cursor; the depth reached."""
        filters = {"bot": "mcts"} if kind == "deep_bot" else {}
        cursor, depth, cursors = None, 0, []
        while depth < self.deep:
            page = self.get({**filters, **({"cursor": cursor} if cursor else {})})
            if page["next"] is None:
                break
            cursor = page["next"]
            cursors.append(cursor)
            depth += 1
        if depth < self.deep:  # a small archive: half its pages in
            depth = len(cursors) // 2
            cursor = cursors[depth - 1] if depth else None
        self.deep_cursors[kind] = cursor
        return depth

    def timed(self, kind: str, n: int) -> float:
        params = self.query(kind, n)
        started = time.perf_counter()
        page = self.get(params)
        took = time.perf_counter() - started
        if kind.startswith("deep"):
            self.walking[kind] = page["next"]  # None: back to the deep cursor
        return took


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def explain(url: str, limit: int, cursors: dict[str, str | None]) -> dict[str, Any]:
    """Each kind's plan: the index it walks, whether it sorts, the rows read."""
    searches = {
        "first": (Search(), None),
        "game": (Search(game="gaudi"), None),
        "bot": (Search(bot="mcts"), None),
        "game_bot": (Search(game="pacal", bot="greedy"), None),
        "range": (
            Search(since_ms=END_MS - 200 * 86_400_000, until_ms=END_MS - 170 * 86_400_000),
            None,
        ),
        "deep": (Search(), cursors.get("deep")),
        "deep_bot": (Search(bot="mcts"), cursors.get("deep_bot")),
    }
    engine = engine_for(url)
    plans = {}
    with engine.connect() as connection:
        for kind, (search, cursor) in searches.items():
            after = decode_cursor(cursor) if cursor else None
            query = page_query(search, limit, after)
            compiled = query.compile(engine, compile_kwargs={"literal_binds": True})
            plan = connection.execute(
                sa.text(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {compiled}")
            ).scalar()
            plans[kind] = summarise(plan[0])
    engine.dispose()
    return plans


def summarise(plan: dict[str, Any]) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = []

    def walk(node: dict[str, Any]) -> None:
        nodes.append(node)
        for child in node.get("Plans", []):
            walk(child)

    walk(plan["Plan"])
    scans = [n for n in nodes if "Index" in n["Node Type"]]
    first = scans[0] if scans else {}
    return {
        "nodes": [n["Node Type"] for n in nodes],
        "index": first.get("Index Name"),
        "direction": first.get("Scan Direction"),
        "index_cond": first.get("Index Cond"),
        "rows_from_index": first.get("Actual Rows"),
        "sorts": any(n["Node Type"] in ("Sort", "Incremental Sort") for n in nodes),
        "execution_ms": plan["Execution Time"],
    }


def worker_pid(server: Any) -> int:
    children = psutil.Process(server.pid).children(recursive=True)
    workers = [c for c in children if "gunicorn" in " ".join(c.cmdline())]
    workers = [w for w in workers if w.ppid() != 1 and w.ppid() != os.getpid()] or workers
    return workers[-1].pid


def measure_export(base: str, pid: int, count: int) -> dict[str, Any]:
    """Export ``count`` records while sampling the worker's RSS every 20 ms."""
    worker = psutil.Process(pid)
    http = requests.Session()
    warm = http.get(f"{base}/v1/matches/export", params={"limit": 2000})  # its imports, its pool
    assert warm.status_code == 200, warm.text
    time.sleep(0.5)
    before = worker.memory_info().rss
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak.append(worker.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    lines = size = 0
    with http.get(
        f"{base}/v1/matches/export", params={"limit": count}, stream=True, timeout=600
    ) as answer:
        assert answer.status_code == 200, answer.text
        for chunk in answer.iter_content(1 << 16):
            lines += chunk.count(b"\n")
            size += len(chunk)
    took = time.perf_counter() - started
    done.set()
    sampler.join()
    after = worker.memory_info().rss
    return {
        "records": lines,
        "bytes": size,
        "seconds": round(took, 2),
        "records_per_s": round(lines / took),
        "rss_before_mb": round(before / 2**20, 1),
        "rss_peak_mb": round(max(peak) / 2**20, 1),
        "rss_after_mb": round(after / 2**20, 1),
        "rss_growth_mb": round((max(peak) - before) / 2**20, 1),
        "samples": len(peak),
    }


def server_env(redis_url: str, database_url: str, port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        REDIS_URL=redis_url,
        LUDOTHEQUE_DATABASE_URL=database_url,
        LUDOTHEQUE_BIND=f"{HOST}:{port}",
        LUDOTHEQUE_WORKERS="1",
        LUDOTHEQUE_RATE_LIMITS="0",
        PYTHONPATH=os.pathsep.join(
            filter(None, [str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH")])
        ),
    )
    return env


def run(args: argparse.Namespace, say: Callable[..., None] = out) -> dict[str, Any]:
    figures: dict[str, Any] = {"records": args.records, "limit": args.limit}
    with (
        bench_database(args.admin_url, args.keep) as url,
        tempfile.TemporaryDirectory(prefix="ludotheque-bench-") as tmp,
        redis_server(Path(tmp) / "redis") as redis_url,
    ):
        say(f"database {url.rsplit('/', 1)[1]}: migrate, fill {args.records:,} matches")
        migrate(url)
        figures["fill"] = fill(url, args.records)
        port = free_port()
        command = [sys.executable, "-m", "gunicorn", "--config", str(GUNICORN_CONF)]
        command.append("bench.archive:served_app()")
        env = server_env(redis_url, url, port)
        with serving(command, env, port, "/readyz", Path(tmp) / "gunicorn.log", 1) as server:
            base = f"http://{HOST}:{port}"
            pages = Pages(base, args.limit, args.deep)
            depth = {kind: pages.go_deep(kind) for kind in ("deep", "deep_bot")}
            say(f"deep pages start {depth['deep']} and {depth['deep_bot']} (bot) pages in")
            for kind in KINDS:  # warm up: the first requests of a worker pay its imports
                for n in range(10):
                    pages.timed(kind, n)
            pages.walking.clear()
            timings: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for n in range(args.repeat):  # interleaved, so that no kind has the machine alone
                for kind in KINDS:
                    timings[kind].append(pages.timed(kind, n) * 1000)
            figures["pages"] = {
                kind: {
                    "p50_ms": round(statistics.median(values), 2),
                    "p99_ms": round(percentile(values, 99), 2),
                    "max_ms": round(max(values), 2),
                    "n": len(values),
                    **({"depth_pages": depth[kind]} if kind in depth else {}),
                }
                for kind, values in timings.items()
            }
            figures["plans"] = explain(url, args.limit, pages.deep_cursors)
            count = min(args.export, args.records)
            say(f"export {count:,} records, sampling the worker's RSS")
            figures["export"] = measure_export(base, worker_pid(server), count)
    figures["target_p99_ms"] = TARGET_P99_MS
    figures["all_under_target"] = all(
        kind["p99_ms"] < TARGET_P99_MS for kind in figures["pages"].values()
    )
    return figures


def report(figures: dict[str, Any], say: Callable[..., None] = out) -> None:
    say(f"\n{figures['records']:,} matches, pages of {figures['limit']} (ms, through HTTP):")
    say(f"  {'kind':<10} {'p50':>7} {'p99':>7} {'max':>7}  plan")
    for kind, timing in figures["pages"].items():
        plan = figures["plans"][kind]
        walked = f"{plan['index']} {plan['direction'].lower()}, {plan['rows_from_index']} rows"
        walked += ", SORTS" if plan["sorts"] else ""
        say(
            f"  {kind:<10} {timing['p50_ms']:>7.2f} {timing['p99_ms']:>7.2f} "
            f"{timing['max_ms']:>7.2f}  {walked}"
        )
    export = figures["export"]
    say(
        f"\nexport: {export['records']:,} records ({export['bytes'] / 2**20:.0f} MB) in "
        f"{export['seconds']} s ({export['records_per_s']:,}/s); worker RSS "
        f"{export['rss_before_mb']} MB before, {export['rss_peak_mb']} MB at most: "
        f"+{export['rss_growth_mb']} MB"
    )
    verdict = "yes" if figures["all_under_target"] else "NO"
    say(f"every p99 under {figures['target_p99_ms']} ms: {verdict}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get("LUDOTHEQUE_POSTGRES_ADMIN_URL", ADMIN_URL),
        help="a database to CREATE DATABASE from ($LUDOTHEQUE_POSTGRES_ADMIN_URL, else the "
        "machine's)",
    )
    parser.add_argument("--repeat", type=int, default=200, help="requests timed per kind")
    parser.add_argument(
        "--deep", type=int, default=1000, help="how many pages in the deep kinds start"
    )
    parser.add_argument("--limit", type=int, default=20, help="matches per page")
    parser.add_argument("--export", type=int, default=100_000, help="records exported")
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--json", type=Path, help="write the figures here")
    if argv is None:
        argv = results.command_line("archive")
    args = parser.parse_args(argv)
    figures = run(args)
    report(figures)
    if args.json:
        results.write(args.json, "archive", argv, figures)
        out(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
