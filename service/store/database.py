"""The SQL database: what must outlive Redis (finished matches now).

One SQLAlchemy engine per process, from ``LUDOTHEQUE_DATABASE_URL``: SQLite
in the data directory by default (``ludotheque serve`` needs nothing
else), PostgreSQL in production (``postgresql://...``, driven by psycopg
3, which cooperates with gevent by itself). The schema is Alembic's
(``service/store/migrations``): ``migrate`` brings a database, empty or
not, to the newest revision, and every process that opens the database
checks it is there first.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).with_name("migrations")
# SQLite: how long a writer waits for another's lock before failing
SQLITE_BUSY_MS = 5000
LOCKED_TRIES = 6  # a write SQLite refused as locked is tried this many times in all
P = ParamSpec("P")
R = TypeVar("R")


def retried_when_locked(write: Callable[P, R]) -> Callable[P, R]:
    """``write`` (a write transaction), done again when SQLite refused it
    with "database is locked": a transaction that read before it wrote
    while another writer committed gets that at once, without waiting the
    busy timeout (WAL's snapshot rule). A few tries, a little apart."""

    @functools.wraps(write)
    def again(*args: P.args, **kwargs: P.kwargs) -> R:
        for attempt in range(LOCKED_TRIES):
            try:
                return write(*args, **kwargs)
            except sa.exc.OperationalError as failed:
                if "database is locked" not in str(failed) or attempt == LOCKED_TRIES - 1:
                    raise
                time.sleep(0.02 * 2**attempt * (1 + random.random()))
        raise AssertionError("unreachable")

    return again


def normalised(url: str) -> str:
    """``url`` with PostgreSQL's driver named (psycopg 3), as users write it
    plainly (``postgresql://`` or ``postgres://``)."""
    for plain in ("postgresql://", "postgres://"):
        if url.startswith(plain):
            return "postgresql+psycopg://" + url[len(plain) :]
    return url


def default_url(data_dir: str | Path) -> str:
    return f"sqlite:///{Path(data_dir).resolve() / 'ludotheque.db'}"


def engine_for(url: str, pool_size: int = 5) -> sa.Engine:
    """An engine for ``url``: SQLite in WAL mode (readers never wait for the
    archiver), with a busy timeout; PostgreSQL with a small pool whose
    connections are checked before use (a restarted server is no error)."""
    url = normalised(url)
    options: dict[str, Any] = {"pool_pre_ping": True}
    if url.startswith("sqlite"):
        engine = sa.create_engine(url, **options)
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    options |= {"pool_size": pool_size, "max_overflow": pool_size, "pool_timeout": 5}
    return sa.create_engine(url, **options)


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # a URL's % would be read as interpolation by configparser
    config.set_main_option("sqlalchemy.url", normalised(url).replace("%", "%%"))
    return config


def migrate(url: str, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision`` (the newest by default),
    from empty if need be; a database already there is left as it is."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)


def head() -> str:
    head = ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()
    assert head is not None
    return head


def current(engine: sa.Engine) -> str | None:
    """The revision the database is at (None: never migrated)."""
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


class NotMigrated(RuntimeError):
    """The database is not at the code's revision: run `ludotheque migrate`."""


def check_migrated(engine: sa.Engine) -> None:
    at, wanted = current(engine), head()
    if at != wanted:
        raise NotMigrated(
            f"the database {engine.url.render_as_string(hide_password=True)} is at "
            f"revision {at or 'none (empty)'}, the code needs {wanted}: "
            "run `ludotheque migrate`"
        )
