"""SQL databases the tests make and drop: SQLite files, and PostgreSQL
databases on a server found or started here.

The server, in this order: ``LUDOTHEQUE_TEST_POSTGRES_URL`` (an admin URL:
a role that may create and drop databases); else the machine's own, if it
answers within ``PROBE_TIMEOUT_S`` at ``LUDOTHEQUE_TEST_POSTGRES_PROBE``
(by default on 127.0.0.1:5432, then on Debian's unix socket, as
``postgres`` without a password); else a private one, ``initdb`` and
``postgres`` from ``/usr/lib/postgresql/*/bin`` in a temporary directory on
a free loopback port, stopped and removed at the end (as the ``postgres``
user when the tests run as root: PostgreSQL refuses root). Else the tests
that need it skip, naming the install command, or fail when
``LUDOTHEQUE_REQUIRE_POSTGRES=1`` (CI: ``.ci/run``).
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
import sqlalchemy as sa

from service.store.database import normalised
from service.store.embedded import free_port

log = logging.getLogger(__name__)

INSTALL = "apt-get install -y postgresql"
# the machine's server, as Debian installs it (pg_hba: trust on loopback)
MACHINE = (
    "postgresql://postgres@127.0.0.1:5432/postgres",
    "postgresql://postgres@/postgres?host=/var/run/postgresql",
)
PROBE_TIMEOUT_S = 2
BINARIES = "/usr/lib/postgresql/*/bin"
# the unprivileged user the private server runs as when the tests run as root
OWNER = "postgres"


def answers(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a PostgreSQL server at ``url`` lets us in within ``timeout_s``."""
    engine = sa.create_engine(
        normalised(url), poolclass=sa.NullPool, connect_args={"connect_timeout": timeout_s}
    )
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError:
        return False
    finally:
        engine.dispose()
    return True


def machine_urls() -> tuple[str, ...]:
    """Where the machine's own server is looked for: ``LUDOTHEQUE_TEST_POSTGRES_PROBE``
    (one URL) if set, else Debian's defaults."""
    probe = os.environ.get("LUDOTHEQUE_TEST_POSTGRES_PROBE")
    return (probe,) if probe else MACHINE


def bin_dir() -> Path | None:
    """The newest installed PostgreSQL's programs (Debian's layout)."""
    found = [path for path in Path("/").glob(BINARIES.lstrip("/")) if (path / "postgres").exists()]
    if not found:
        return None
    return max(found, key=lambda path: int(re.sub(r"\D", "", path.parent.name) or 0))


class PrivatePostgres:
    """``with PrivatePostgres() as url: ...`` runs a throwaway server for the
    block: a new cluster in a temporary directory, trusting loopback
    connections, without fsync (nothing in it needs to survive)."""

    def __init__(self, bin_path: Path) -> None:
        self.bin = bin_path
        self.port = free_port()
        self.as_owner: list[str] = []
        self.process: subprocess.Popen[bytes] | None = None
        # under /tmp, not pytest's tmp_path: that one is root's alone (0700)
        self.root = Path(tempfile.mkdtemp(prefix="ldq-pg-"))
        self.data = self.root / "data"
        self.log_path = self.root / "postgres.log"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> str:
        if os.geteuid() == 0:
            owner = pwd.getpwnam(OWNER)
            os.chown(self.root, owner.pw_uid, owner.pw_gid)
            self.as_owner = ["runuser", "-u", OWNER, "--"]
        initdb = [
            *self.as_owner,
            str(self.bin / "initdb"),
            *("-D", str(self.data), "-U", "postgres", "--auth=trust"),
            *("--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"),
        ]
        done = subprocess.run(initdb, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{done.stdout}{done.stderr}")
        return self.run()

    def run(self) -> str:
        """Start the server on its cluster (again, after ``halt``)."""
        server = [
            *self.as_owner,
            str(self.bin / "postgres"),
            *("-D", str(self.data), "-p", str(self.port)),
            *("-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.root}"),
            *("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"),
        ]
        log.info("starting a private PostgreSQL on port %d in %s", self.port, self.root)
        with self.log_path.open("ab") as log_file:
            # a session of its own: a Ctrl-C meant for pytest does not stop it mid-test
            self.process = subprocess.Popen(
                server, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._wait_ready()
        return self.url

    def _wait_ready(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        assert self.process is not None
        while not answers(self.url, timeout_s=1):
            if self.process.poll() is not None or time.monotonic() > deadline:
                text = self.log_path.read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"the private PostgreSQL did not start:\n{text}")
            time.sleep(0.05)

    def stop(self) -> None:
        """A fast shutdown, then the directory goes."""
        self.halt()
        shutil.rmtree(self.root, ignore_errors=True)

    def halt(self) -> None:
        """A fast shutdown (SIGINT to the postmaster: clients are cut off);
        the cluster stays, for ``run`` to start again."""
        if self.process is not None and self.process.poll() is None:
            # the postmaster itself, not runuser, which would wait 2 s before a SIGKILL
            pid_file = self.data / "postmaster.pid"
            pid = int(pid_file.read_text().split()[0]) if pid_file.exists() else self.process.pid
            os.kill(pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def postgres_server() -> Iterator[str]:
    """An admin URL of a PostgreSQL server for the block, found or started as
    the module says; when there is none to be had, the test skips (or fails)."""
    explicit = os.environ.get("LUDOTHEQUE_TEST_POSTGRES_URL")
    if explicit:
        yield explicit
        return
    for url in machine_urls():
        if answers(url):
            yield url
            return
    bin_path = bin_dir()
    if bin_path is None:
        unavailable(f"no PostgreSQL server answers and none is installed ({BINARIES})")
    if os.geteuid() == 0 and not has_user(OWNER):
        unavailable(f"PostgreSQL refuses root, and there is no {OWNER!r} user to run it")
    with PrivatePostgres(bin_path) as url:
        yield url


def unavailable(reason: str) -> NoReturn:
    """Skip, saying how to install PostgreSQL; fail when LUDOTHEQUE_REQUIRE_POSTGRES=1."""
    message = f"{reason}: install it with `{INSTALL}`, or set LUDOTHEQUE_TEST_POSTGRES_URL"
    if os.environ.get("LUDOTHEQUE_REQUIRE_POSTGRES") == "1":
        pytest.fail(message + " (LUDOTHEQUE_REQUIRE_POSTGRES=1)")
    pytest.skip(message)


def has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{(directory / 'ludotheque.db').resolve()}"


@contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    """A new, empty PostgreSQL database on ``admin_url``'s server for the block,
    dropped afterwards (its connections cut off); yields its URL."""
    name = f"ldq_test_{secrets.token_hex(6)}"
    admin = sa.create_engine(
        normalised(admin_url), poolclass=sa.NullPool, isolation_level="AUTOCOMMIT"
    )
    try:
        with admin.connect() as connection:
            connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
        url = sa.make_url(normalised(admin_url)).set(database=name)
        try:
            yield url.render_as_string(hide_password=False)
        finally:
            with admin.connect() as connection:
                connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()
