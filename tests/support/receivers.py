"""Real HTTP servers on loopback that Ludothèque calls in the tests: a webhook
receiver that verifies every signature, and HTTP bots of several tempers."""

from __future__ import annotations

import json
import random
import select
import socket
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def read_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def answer(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)


class Served:
    """A handler class served on 127.0.0.1 in a thread; ``url``, ``stop()``."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class WebhookReceiver(Served):
    """Verifies each delivery with the reference ``standardwebhooks`` package
    and the match's secret (unknown match: 500, so it comes again), refuses
    a delivery that leaves a gap after the last one and two deliveries of one match at
    once (each waits ``delay_s`` to give them a chance), fails ``failure_rate`` of them on
    purpose (after verifying), and keeps every event it accepted, by match.
    """

    def __init__(self, failure_rate: float = 0.0, status: int = 200, delay_s: float = 0.0) -> None:
        self.secrets: dict[str, str] = {}
        self.events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.last: dict[str, int] = defaultdict(int)  # last index accepted, per match
        self.bad: list[str] = []  # what should never happen
        self.attempts = 0
        self.calls = 0  # requests received, verified yet or not
        self.in_flight: dict[str | None, int] = defaultdict(int)
        self.delay_s = delay_s
        self.failure_rate = failure_rate
        self.status = status
        self.lock = threading.Lock()
        self.rng = random.Random(7)
        receiver = self

        class Handler(Quiet):
            def do_POST(self) -> None:
                receiver.receive(self)

        super().__init__(Handler)

    def receive(self, request: Quiet) -> None:
        body = request.read_body()
        match_id = json.loads(body).get("match_id") if body.startswith(b"{") else None
        with self.lock:
            self.calls += 1
            self.in_flight[match_id] += 1
            if self.in_flight[match_id] > 1:
                self.bad.append(f"two deliveries of {match_id} at once")
        try:
            time.sleep(self.delay_s)  # gives overlapping deliveries a chance to show
            self.verify(request, body)
        finally:
            with self.lock:
                self.in_flight[match_id] -= 1

    def verify(self, request: Quiet, body: bytes) -> None:
        with self.lock:
            self.attempts += 1
            try:
                match_id = json.loads(body)["match_id"]
            except (ValueError, KeyError):
                self.bad.append("not a delivery")
                request.answer(400)
                return
            secret = self.secrets.get(match_id)
            if secret is None:
                request.answer(500)  # not registered yet: try again later
                return
            try:
                delivery = Webhook(secret).verify(body, dict(request.headers))
            except WebhookVerificationError as refused:
                self.bad.append(f"bad signature: {refused}")
                request.answer(401)
                return
            if not request.headers["webhook-id"].startswith("msg_"):
                self.bad.append("odd id")
            if delivery["first"] > self.last[match_id] + 1:
                self.bad.append(f"gap in {match_id}: {delivery['first']} after {self.last}")
            if self.status != 200 or self.rng.random() < self.failure_rate:
                request.answer(self.status if self.status != 200 else 503)
                return
            for event in delivery["events"]:
                if event["index"] > self.last[match_id]:  # at least once: skip what we have
                    self.events[match_id].append(event)
            self.last[match_id] = max(self.last[match_id], delivery["last"])
            request.answer(204)


class BotServer(Served):
    """An HTTP bot: ``temper`` is good (the first legal action), late
    (answers after ``late_s``), illegal (an action nobody may play) or
    closes (drops the connection unanswered). Verifies every signature."""

    def __init__(self, temper: str, late_s: float = 3.0) -> None:
        self.secret: str | None = None
        self.calls: list[dict[str, Any]] = []
        self.bad: list[str] = []
        bot = self

        class Handler(Quiet):
            def do_POST(self) -> None:
                body = self.read_body()
                try:
                    turn = Webhook(bot.secret or "whsec_AA==").verify(body, dict(self.headers))
                except WebhookVerificationError as refused:
                    bot.bad.append(str(refused))
                    self.answer(401)
                    return
                bot.calls.append(turn)
                if temper == "closes":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if temper == "late":
                    time.sleep(late_s)
                action = turn["legal_actions"][0]
                if temper == "illegal":
                    action = {"type": "no_such_move"}
                self.answer(200, json.dumps({"action": action}).encode())

        super().__init__(Handler)


class Dripper:
    """A hostile server (a webhook receiver or an HTTP bot) that reads the
    request, then answers one byte every ``gap_s``: a status line and
    headers that never end, for ``drip_s`` at most. It keeps how long each
    connection lasted (until the caller closed it, or the drip ended), and
    serves any number of connections at once, each on a thread."""

    def __init__(
        self,
        gap_s: float = 0.1,
        drip_s: float = 20.0,
        host: str = "127.0.0.1",
        report: Callable[[str, float], None] | None = None,
        tls: bool = False,
    ) -> None:
        self.tls = tls  # drip a TLS record (a server hello that never ends) instead
        self.report = report  # told ("open", 0) and ("closed", seconds held) of each connection
        self.gap_s = gap_s
        self.drip_s = drip_s
        self.held: list[float] = []  # seconds each finished connection lasted
        self.open = 0
        self.calls = 0
        self.lock = threading.Lock()
        self.listener = socket.create_server((host, 0))
        self.url = f"http://{host}:{self.listener.getsockname()[1]}/drip"
        self.stopping = threading.Event()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.drip, args=(connection,), daemon=True).start()

    def drip(self, connection: socket.socket) -> None:
        started = time.monotonic()
        with self.lock:
            self.open += 1
            self.calls += 1
            if self.report:
                self.report("open", 0.0)
        try:
            with connection:
                connection.settimeout(self.drip_s)
                request = b""
                while b"\r\n\r\n" not in request and not (self.tls and request):
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    request += chunk
                head = b"HTTP/1.1 200 OK\r\nX-Drip: " + b"x" * 1_000_000
                if self.tls:  # a handshake record of 16 KiB: TLS reads it whole
                    head = b"\x16\x03\x03\x40\x00\x02\x00\x3f\xfc" + b"\x03" * 16_380
                for byte in head:
                    if time.monotonic() - started > self.drip_s or self.stopping.is_set():
                        return
                    connection.sendall(bytes([byte]))
                    # wait a gap, or see the caller close the connection
                    readable, _, _ = select.select([connection], [], [], self.gap_s)
                    if readable and not connection.recv(65536):
                        return
        except OSError:
            return
        finally:
            with self.lock:
                self.open -= 1
                self.held.append(time.monotonic() - started)
                if self.report:
                    self.report("closed", self.held[-1])

    def stop(self) -> None:
        self.stopping.set()
        self.listener.close()


class DripperFarm:
    """``count`` Drippers in a process of their own, so that their threads
    do not compete with the server's for this process's GIL (a hostile
    server is someone else's machine): ``urls``, and per dripper the
    connections it got (``calls``) and has open (``open``)."""

    def __init__(self, count: int, gap_s: float, drip_s: float) -> None:
        root = Path(__file__).resolve().parents[2]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.receivers", str(count), str(gap_s), str(drip_s)],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        out: IO[str] = self.process.stdout  # type: ignore[assignment]
        self.urls = [out.readline().strip() for _ in range(count)]
        self.calls = [0] * count
        self.open = [0] * count
        self.held: list[float] = []
        threading.Thread(target=self.tally, args=(out,), daemon=True).start()

    def tally(self, out: IO[str]) -> None:
        for line in out:
            event, index, seconds = line.split()
            if event == "open":
                self.calls[int(index)] += 1
                self.open[int(index)] += 1
            else:
                self.open[int(index)] -= 1
                self.held.append(float(seconds))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe:
                pipe.close()


def _farm(count: int, gap_s: float, drip_s: float) -> None:
    """Serve ``count`` drippers, print their URLs, then a line per
    connection opened or closed, until stdin closes or SIGTERM."""
    lock = threading.Lock()

    def reporter(index: int) -> Callable[[str, float], None]:
        def report(event: str, seconds: float) -> None:
            with lock:
                print(event, index, f"{seconds:.3f}", flush=True)

        return report

    drippers = [Dripper(gap_s, drip_s, report=reporter(i)) for i in range(count)]
    with lock:
        for dripper in drippers:
            print(dripper.url, flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    _farm(int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]))
