"""A real Redis primary with replicas, watched by three Sentinels
(``redis-server --sentinel``), on loopback ports: replicas can be paused
(SIGSTOP), the primary killed (SIGKILL) and the Sentinels left to fail over."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import redis

from service.store.embedded import free_port, server_binary
from tests.support.clusters import end, start_server, wait_for, wait_ping

SERVICE = "mymaster"


class SentinelGroup:
    def __init__(
        self, root: Path, replicas: int = 2, sentinels: int = 3, down_after_ms: int = 1000
    ) -> None:
        self.root = root
        self.down_after_ms = down_after_ms
        self.ports = [free_port() for _ in range(1 + replicas)]
        self.sentinel_ports = [free_port() for _ in range(sentinels)]
        self.processes: dict[int, subprocess.Popen] = {}

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{port}" for port in self.sentinel_ports)
        return f"redis+sentinel://{hosts}/{SERVICE}/0"

    def start_server(self, port: int, replica_of: int | None = None) -> None:
        options = [] if replica_of is None else ["--replicaof", "127.0.0.1", str(replica_of)]
        self.processes[port] = start_server(self.root / str(port), port, *options)

    def start_sentinel(self, port: int) -> None:
        folder = self.root / f"sentinel-{port}"
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "sentinel.conf"
        config.write_text(
            f"port {port}\nbind 127.0.0.1\ndir {folder}\nlogfile {folder / 'sentinel.log'}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {self.ports[0]} 2\n"
            f"sentinel down-after-milliseconds {SERVICE} {self.down_after_ms}\n"
            f"sentinel failover-timeout {SERVICE} 5000\n"
            f"sentinel parallel-syncs {SERVICE} {len(self.ports)}\n"
        )
        self.processes[port] = subprocess.Popen(
            [server_binary(), str(config), "--sentinel"], start_new_session=True
        )

    def start(self) -> SentinelGroup:
        primary, *replicas = self.ports
        self.start_server(primary)
        for port in replicas:
            self.start_server(port, replica_of=primary)
        for port in self.sentinel_ports:
            self.start_sentinel(port)
        for port in self.ports + self.sentinel_ports:
            with redis.Redis(port=port) as node:
                wait_ping(node)
        self.wait_healthy()
        return self

    def primary(self) -> int:
        """The primary's port, as the first Sentinel that answers names it."""
        for port in self.sentinel_ports:
            try:
                with redis.Redis(port=port, socket_timeout=2) as sentinel:
                    _, found = sentinel.execute_command(
                        "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SERVICE
                    )
                    return int(found)
            except (redis.ConnectionError, redis.TimeoutError):
                continue
        raise AssertionError("no Sentinel answers")

    def replicas(self) -> list[int]:
        primary = self.primary()
        return [port for port in self.ports if port != primary]

    def wait_healthy(self, timeout: float = 60) -> float:
        """Until the named primary answers as one, with every live replica
        linked to it and known to the Sentinels; the seconds it took."""
        return wait_for(self._healthy, timeout, "the group did not settle")

    def _healthy(self) -> bool:
        primary = self.primary()
        live = [p for p in self.ports if self.processes[p].poll() is None]
        with redis.Redis(port=primary, socket_timeout=2) as node:
            info = node.info("replication")
            if info["role"] != "master" or info["connected_slaves"] < len(live) - 1:
                return False
        for port in live:
            if port == primary:
                continue
            with redis.Redis(port=port, socket_timeout=2) as node:
                info = node.info("replication")
                if info["role"] != "slave" or info.get("master_link_status") != "up":
                    return False
                if int(info["master_port"]) != primary:
                    return False
        # Sentinels learn of replicas from the primary's INFO, every 10 s:
        # until then they have no replica to promote.
        for port in self.sentinel_ports:
            with redis.Redis(port=port, socket_timeout=2) as sentinel:
                good = [
                    replica
                    for replica in sentinel.sentinel_slaves(SERVICE)
                    if int(replica["port"]) in live
                    and not {"s_down", "o_down", "disconnected"} & set(replica["flags"].split(","))
                ]
                if len(good) < len(live) - 1:
                    return False
        return True

    def signal(self, port: int, sig: int) -> None:
        self.processes[port].send_signal(sig)
        if sig in (signal.SIGKILL, signal.SIGTERM):
            self.processes[port].wait(timeout=30)

    def restart(self, port: int) -> None:
        """Start a dead server again as a replica of the current primary."""
        self.start_server(port, replica_of=self.primary())

    def close(self) -> None:
        for process in self.processes.values():
            end(process)
