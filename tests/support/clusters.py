"""Real Redis Clusters on loopback ports, for outage and failover tests and
for bench/failover.py: primaries with or without replicas, nodes that can
be stopped, killed (SIGKILL) and started again on their own data."""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import redis

from service.store.embedded import server_binary

SLOTS = 16384


def cluster_port() -> int:
    """A free port whose cluster bus port (the port + 10000) is free too;
    ephemeral ports are too high for that, so pick below them."""
    while True:
        port = random.randint(20000, 30000)
        try:
            with socket.socket() as node, socket.socket() as bus:
                node.bind(("127.0.0.1", port))
                bus.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        return port


def wait_ping(client: redis.Redis) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            client.ping()
            return
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def wait_for(check: Callable[[], bool], timeout: float, failure: str) -> float:
    """Until ``check()`` is true (a Redis error counting as false); the
    seconds it took."""
    started = time.monotonic()
    while True:
        try:
            if check():
                return time.monotonic() - started
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
            pass
        assert time.monotonic() - started < timeout, failure
        time.sleep(0.1)


def end(process: subprocess.Popen) -> None:
    """Stop a server at a test's end: SIGTERM, then SIGKILL if it is still
    there 15 s later (a primary waits for lagging replicas, a busy machine
    writes its AOF slowly: neither is what a test checks)."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGCONT)  # in case a test paused it
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)


def start_server(folder: Path, port: int, *options: str) -> subprocess.Popen:
    """A redis-server on loopback ``port``, its AOF (fsync'd every second)
    and log in ``folder``, with more ``options``."""
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            server_binary(),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            "--logfile",
            str(folder / "server.log"),
            *options,
        ],
        start_new_session=True,
    )


class Cluster:
    """``primaries`` masters sharing the slots, each with ``replicas``
    replicas; every node keeps an AOF (fsync'd every second) and its
    nodes.conf in its own folder, so a stopped node comes back as it was."""

    def __init__(
        self, root: Path, primaries: int = 3, replicas: int = 0, node_timeout_ms: int = 1000
    ) -> None:
        self.root = root
        self.node_timeout_ms = node_timeout_ms
        self.ports = [cluster_port() for _ in range(primaries * (1 + replicas))]
        self.primaries = primaries
        self.processes: dict[int, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start_node(self, port: int) -> None:
        folder = self.root / str(port)
        self.processes[port] = start_server(
            folder,
            port,
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            str(folder / "nodes.conf"),
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
        )

    def start_answering(self, port: int, tries: int = 5) -> int:
        """Start a node on ``port`` and wait for its answer; if it exits
        instead (its port, free when picked, was taken since: a full run saw
        one refuse every connection for 30 s), on another port. The port it
        answers on."""
        for _ in range(tries):
            self.start_node(port)
            process = self.processes[port]
            deadline = time.monotonic() + 30
            with self.client(port) as node:
                while process.poll() is None and time.monotonic() < deadline:
                    try:
                        node.ping()
                        return port
                    except (redis.ConnectionError, redis.TimeoutError):
                        time.sleep(0.05)
            log = (self.root / str(port) / "server.log").read_text(errors="replace")[-2000:]
            if process.poll() is None:
                raise AssertionError(f"the node on {port} did not answer in 30 s:\n{log}")
            del self.processes[port]
            port = cluster_port()
        raise AssertionError(f"no node started in {tries} tries; the last one's log:\n{log}")

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(port=port, socket_timeout=5, socket_connect_timeout=1)

    def start(self) -> Cluster:
        try:
            return self._start()
        except BaseException:
            self.close()  # no node left running (a later test's warning)
            raise

    def _start(self) -> Cluster:
        self.ports = [self.start_answering(port) for port in self.ports]
        masters, others = self.ports[: self.primaries], self.ports[self.primaries :]
        bounds = [i * SLOTS // self.primaries for i in range(self.primaries + 1)]
        for i, port in enumerate(masters):
            with self.client(port) as node:
                node.execute_command("CLUSTER", "ADDSLOTSRANGE", bounds[i], bounds[i + 1] - 1)
        with self.client(self.ports[0]) as first:
            for port in self.ports[1:]:
                first.execute_command("CLUSTER", "MEET", "127.0.0.1", port)
        self.wait_known(len(self.ports))
        for i, port in enumerate(others):
            with self.client(masters[i % self.primaries]) as master:
                master_id = master.execute_command("CLUSTER", "MYID").decode()
            with self.client(port) as replica:
                replica.execute_command("CLUSTER", "REPLICATE", master_id)
        self.wait_healthy()
        return self

    def wait_known(self, count: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        for port in self.ports:
            with self.client(port) as node:
                while len(node.execute_command("CLUSTER", "NODES").decode().splitlines()) < count:
                    assert time.monotonic() < deadline, "the nodes did not meet"
                    time.sleep(0.1)

    def nodes(self) -> list[dict]:
        """CLUSTER NODES as some live node sees it."""
        for port in self.ports:
            try:
                with self.client(port) as node:
                    text = node.execute_command("CLUSTER", "NODES").decode()
            except redis.ConnectionError:
                continue
            rows = []
            for line in text.splitlines():
                parts = line.split()
                rows.append(
                    {
                        "id": parts[0],
                        "port": int(parts[1].split(":")[1].split("@")[0]),
                        "flags": set(parts[2].split(",")),
                        "master": parts[3],
                        "slots": parts[8:],
                    }
                )
            return rows
        raise AssertionError("no node answers")

    def masters_with_slots(self) -> list[int]:
        return [
            n["port"]
            for n in self.nodes()
            if "master" in n["flags"] and "fail" not in n["flags"] and n["slots"]
        ]

    def wait_healthy(self, timeout: float = 60) -> float:
        """Until every live node says cluster_state:ok, every slot is served
        by a live primary and every live replica is in sync; the seconds it took."""
        return wait_for(self._healthy, timeout, "the cluster did not come back")

    def _healthy(self) -> bool:
        live = [port for port, p in self.processes.items() if p.poll() is None]
        for port in live:
            with self.client(port) as node:
                if (
                    not node.execute_command("CLUSTER", "INFO")
                    .decode()
                    .startswith("cluster_state:ok")
                ):
                    return False
                info = node.info("replication")
                if info["role"] == "slave" and info.get("master_link_status") != "up":
                    return False
        nodes = self.nodes()
        flagged = [n for n in nodes if n["port"] in live and "fail" in n["flags"]]
        return not flagged and len(self.masters_with_slots()) == self.primaries

    def wait_replaced(self, port: int, timeout: float = 60) -> None:
        """Until the other nodes have promoted a replica of ``port``'s slots."""
        deadline = time.monotonic() + timeout
        while port in self.masters_with_slots():
            assert time.monotonic() < deadline, "no replica took over"
            time.sleep(0.1)

    def kill(self, port: int, sig: int = signal.SIGKILL) -> None:
        process = self.processes[port]
        process.send_signal(sig)
        process.wait(timeout=30)

    def stop_all(self) -> None:
        for port in self.ports:
            if self.processes[port].poll() is None:
                self.kill(port, signal.SIGTERM)

    def start_all(self) -> None:
        for port in self.ports:
            if self.processes[port].poll() is not None:
                self.start_node(port)

    def close(self) -> None:
        for process in self.processes.values():
            end(process)
