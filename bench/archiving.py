"""How soon a finished match is archived, under load (issue 35, point 1:
within 5 s of its end, p99). Not a test; loopback only, bounded in time.

Starts ``ludotheque serve`` on a free loopback port with a data directory
of its own (its embedded Redis; the archive in SQLite there, or in
``--database-url``, e.g. a PostgreSQL database you made), then creates
``--matches`` bot-only matches (two ``random`` bots; Dékal, Pacal, Gaudí in turn) at
``--rate`` a second, from ``--threads`` threads, while the server's bot
workers play them to their end. Once every match is archived it reads,
from the archive, each match's end (``ended_ms``, stamped by the write that
ended it) and when the archiver wrote it (``archived_ms``), and reports the
delay's p50, p99 and max; and of the matches not archived by ``--timeout``,
how many were still in play (bots too slow for the load) and how many had
finished unarchived (a failure: the exit status is 1). Rate limits and the
cap on bot seats are off (not what is measured).
Writes ``bench/results/archiving.json`` (``--json PATH`` elsewhere)::

    python -m bench.archiving                                # 400 matches, 20 a second
    python -m bench.archiving --matches 2000 --rate 100 --bot-workers 2
    python -m bench.archiving --database-url postgresql://postgres@127.0.0.1/ldq_bench
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests
import sqlalchemy as sa

from bench import results
from bench.bots import HOST, percentile, serving
from service.store.archive import matches
from service.store.database import default_url, engine_for
from service.store.embedded import free_port

# Ducale's matches between random bots last thousands of moves: minutes each
# under this load, measuring the bots rather than the archive
GAMES = ("dekal", "pacal", "gaudi")


def create(base: str, game: str) -> str:
    body = {"players": [{"bot": "random"}, {"bot": "random"}]}
    answer = requests.post(f"{base}/v1/games/{game}/matches", json=body, timeout=30)
    answer.raise_for_status()
    return answer.json()["id"]


def created(base: str, count: int, rate: float, threads: int) -> dict[str, str]:
    """``count`` matches, one every 1/``rate`` s, from ``threads`` threads."""
    games = itertools.cycle(GAMES)
    start = time.perf_counter()
    lock = threading.Lock()
    ids: dict[str, str] = {}

    def one(n: int) -> None:
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        with lock:
            game = next(games)
        match_id = create(base, game)
        with lock:
            ids[match_id] = game

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(one, range(count)))
    return ids


def archived(engine: sa.Engine, ids: dict[str, str]) -> list[Any]:
    query = sa.select(matches.c.id, matches.c.ended_ms, matches.c.archived_ms).where(
        matches.c.id.in_(list(ids))
    )
    with engine.connect() as connection:
        return list(connection.execute(query))


def run(args: argparse.Namespace) -> dict[str, Any]:
    data = Path(tempfile.mkdtemp(prefix="ldq-archiving-"))
    database_url = args.database_url or default_url(data)
    env = {
        **os.environ,
        "LUDOTHEQUE_DATABASE_URL": database_url,
        "LUDOTHEQUE_RATE_LIMITS": "0",
        "LUDOTHEQUE_BOT_SEATS_PER_ADDRESS": "0",
        "LUDOTHEQUE_APPENDFSYNC": args.appendfsync,
    }
    env.pop("REDIS_URL", None)
    port = free_port()
    base = f"http://{HOST}:{port}"
    serve_args = ["--data-dir", str(data), "--workers", str(args.workers)]
    serve_args += ["--bot-workers", str(args.bot_workers)]
    with serving(port, env, serve_args, data.with_suffix(".log")):
        started = time.perf_counter()
        ids = created(base, args.matches, args.rate, args.threads)
        print(f"created {len(ids)} matches in {time.perf_counter() - started:.1f} s", flush=True)
        engine = engine_for(database_url)
        deadline = time.monotonic() + args.timeout
        rows = archived(engine, ids)
        while len(rows) < len(ids) and time.monotonic() < deadline:
            time.sleep(1)
            rows = archived(engine, ids)
            print(f"archived {len(rows)} of {len(ids)}", flush=True)
        engine.dispose()
        # what was not archived: still in play (the bots were slow), or finished and missed
        done = {row.id for row in rows}
        statuses = [
            requests.get(f"{base}/v1/games/{game}/matches/{match_id}", timeout=30).json()["status"]
            for match_id, game in ids.items()
            if match_id not in done
        ]
    delays = [(row.archived_ms - row.ended_ms) / 1000 for row in rows]
    return {
        "matches": len(ids),
        "archived": len(rows),
        "unfinished": sum(status != "finished" for status in statuses),
        "finished_not_archived": sum(status == "finished" for status in statuses),
        "rate_per_s": args.rate,
        "workers": args.workers,
        "bot_workers": args.bot_workers,
        "database": sa.engine.make_url(database_url).get_backend_name(),
        "appendfsync": args.appendfsync,
        "delay_s": {
            "p50": round(percentile(delays, 50), 3),
            "p99": round(percentile(delays, 99), 3),
            "max": round(max(delays), 3),
        }
        if delays
        else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.archiving", description=__doc__)
    parser.add_argument("--matches", type=int, default=400)
    parser.add_argument("--rate", type=float, default=20.0, help="matches created a second")
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--bot-workers", type=int, default=1)
    parser.add_argument("--appendfsync", default="everysec", choices=("always", "everysec", "no"))
    parser.add_argument("--database-url", help="default: SQLite in the server's data directory")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for the last")
    parser.add_argument("--json", type=Path, default=results.default_path("archiving"))
    args = parser.parse_args(argv)
    figures = run(args)
    delay = figures["delay_s"]
    print(
        f"{figures['archived']} of {figures['matches']} archived ({figures['database']}); "
        f"end to archive: p50 {delay['p50']} s, p99 {delay['p99']} s, max {delay['max']} s"
        if delay
        else "nothing archived"
    )
    path = results.write(args.json, "archiving", sys.argv[1:] if argv is None else argv, figures)
    print(f"wrote {path}")
    if figures["unfinished"]:
        print(f"{figures['unfinished']} matches were still in play at the end (slow bots)")
    return 0 if figures["finished_not_archived"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
