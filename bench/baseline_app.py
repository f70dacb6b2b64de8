"""The floor any Ludothèque request must pay, as a bare Flask app (not a test).

``bench.load`` and ``bench.peer`` serve it under the same gunicorn
configuration as the service (``service/server/gunicorn_conf.py``, gevent
workers) and the same Redis client settings (``service.store.matches.connect``),
so that the only difference left is the work Ludothèque does on top:

- ``POST /rmw/<n>``: one read-modify-write of a 2 KB JSON value in a single
  Lua round trip (the version bumped, the value written back and returned),
  the floor of playing an action;
- ``GET /get/<n>``: one Redis GET of that value, the floor of reading a match.

And the floor of a two-seat match played over HTTP, as ``bench.peer`` plays
Ludothèque's (its ``floor-*`` systems):

- ``POST /floor/<n>/reset?moves=M``: a fresh 2 KB value for match ``n``
  (version 0, ending after ``M`` moves), the floor of creating a match;
- ``POST /floor/<n>/actions``: the same read-modify-write, the request's body
  (the move) stored in the value, with a ``PUBLISH`` on ``floor:<n>`` in the
  same Lua script: the least a durable move shared across processes costs;
- ``GET /floor/<n>?seat=S&wait=W``: the value, at once when it is seat
  ``S``'s turn (version % 2 == S) or the match is over, else a long poll of
  up to ``W`` seconds until the other seat moves. Each worker process holds
  one pub/sub connection, subscribed to ``floor:*`` before it serves a
  request, and a greenlet reading it that wakes the waiters of ``n``; a
  waiter registers before it reads the value, so no wake-up is lost.

No tokens, checks, limits, logs or metrics: the floor. Run it as
``gunicorn --config service/server/gunicorn_conf.py 'bench.baseline_app:create_app()'``
with ``REDIS_URL`` set.
"""

from __future__ import annotations

import contextlib
import os
import time

import gevent
import orjson
import redis
from flask import Flask, Response, request
from gevent.event import Event
from redis.backoff import NoBackoff
from redis.retry import Retry

from service.live.shutdown import stopping
from service.store.matches import connect

VALUE_BYTES = 2048
CHANNELS = b"floor:*"

# Decode, bump the version, encode and write back: the same read, check and
# write that an action's commit does, in one round trip.
BUMP = """
local raw = redis.call('GET', KEYS[1])
if not raw then
  return redis.error_reply('missing ' .. KEYS[1])
end
local value = cjson.decode(raw)
value['version'] = value['version'] + 1
"""
WRITE_BACK = """
local encoded = cjson.encode(value)
redis.call('SET', KEYS[1], encoded)
"""
READ_MODIFY_WRITE = BUMP + WRITE_BACK + "return encoded\n"

# The same, the move kept in the value and the waiting seat woken.
FLOOR_MOVE = (
    BUMP
    + "value['last'] = ARGV[1]\n"
    + WRITE_BACK
    + "redis.call('PUBLISH', ARGV[2], value['version'])\nreturn encoded\n"
)


def key(n: int) -> str:
    return f"bench:{{{n}}}"


def floor_key(n: int) -> str:
    return f"floor:{{{n}}}"


def initial_value(n: int, version: int = 1, **fields: int) -> bytes:
    """A 2 KB JSON document shaped a little like a match."""
    value = {"id": n, "version": version, **fields, "seats": [{"seat": 0}, {"seat": 1}]}
    value["padding"] = ""
    filler = VALUE_BYTES - len(orjson.dumps(value))
    value["padding"] = "x" * filler
    return orjson.dumps(value)


class Waiters:
    """The long polls of this worker process, by match: one pub/sub
    connection for all of them and a greenlet reading it."""

    def __init__(self, url: str):
        self.url = url
        self.waiting: dict[int, set[Event]] = {}
        self.pubsub = self.subscribe()
        gevent.spawn(self.listen)
        gevent.spawn(self.watch_stop)

    def subscribe(self) -> redis.client.PubSub:
        """Subscribed, confirmed: from here on every move is heard. A lost
        connection raises (no silent reconnection, which could miss a move)."""
        pubsub = redis.Redis.from_url(self.url, retry=Retry(NoBackoff(), 0)).pubsub()
        pubsub.psubscribe(CHANNELS)
        pubsub.get_message(timeout=10)
        return pubsub

    def listen(self) -> None:
        while True:
            try:
                for message in self.pubsub.listen():
                    if message["type"] == "pmessage":
                        self.wake(int(message["channel"][6:]))
            except redis.RedisError:
                # a move may have gone unheard: every waiter reads again
                for n in list(self.waiting):
                    self.wake(n)
                gevent.sleep(0.1)
                with contextlib.suppress(redis.RedisError):
                    self.pubsub = self.subscribe()

    def wake(self, n: int) -> None:
        for event in self.waiting.pop(n, ()):
            event.set()

    def watch_stop(self) -> None:
        """When the worker stops, end the long polls (gunicorn would wait
        for them up to its graceful timeout)."""
        while not stopping():
            gevent.sleep(1)
        for n in list(self.waiting):
            self.wake(n)

    def follow(self, n: int) -> Event:
        event = Event()
        self.waiting.setdefault(n, set()).add(event)
        return event

    def leave(self, n: int, event: Event) -> None:
        events = self.waiting.get(n)
        if events is not None:
            events.discard(event)
            if not events:
                del self.waiting[n]


def settled(value: bytes, seat: int) -> bool:
    """The seat's turn, or the match over."""
    document = orjson.loads(value)
    version = document["version"]
    return version >= document["end"] or version % 2 == seat


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(config or {})
    url = app.config.get("REDIS_URL") or os.environ["REDIS_URL"]
    client = connect(url)
    rmw = client.register_script(READ_MODIFY_WRITE)
    floor_move = client.register_script(FLOOR_MOVE)
    waiters = Waiters(url)  # in each worker: gunicorn loads the app after forking

    def found(value: bytes | None) -> Response:
        if value is None:
            return Response(b'{"code":"not_found"}', status=404, mimetype="application/json")
        return Response(value, mimetype="application/json")

    @app.post("/rmw/<int:n>")
    def read_modify_write(n: int) -> Response:
        return Response(rmw(keys=[key(n)]), mimetype="application/json")

    @app.get("/get/<int:n>")
    def get(n: int) -> Response:
        return found(client.get(key(n)))

    @app.post("/floor/<int:n>/reset")
    def floor_reset(n: int) -> Response:
        value = initial_value(n, version=0, end=request.args.get("moves", 64, type=int))
        client.set(floor_key(n), value)
        return Response(value, status=201, mimetype="application/json")

    @app.post("/floor/<int:n>/actions")
    def floor_action(n: int) -> Response:
        value = floor_move(keys=[floor_key(n)], args=[request.get_data(), f"floor:{n}"])
        return Response(value, mimetype="application/json")

    @app.get("/floor/<int:n>")
    def floor_view(n: int) -> Response:
        seat = request.args.get("seat", type=int)
        wait = min(request.args.get("wait", 0, type=float), 60)
        if seat is None or wait <= 0:
            return found(client.get(floor_key(n)))
        deadline = time.monotonic() + wait
        while True:
            event = waiters.follow(n)  # before the read: a move after it wakes us
            try:
                value = client.get(floor_key(n))
                remaining = deadline - time.monotonic()
                if value is None or settled(value, seat) or remaining <= 0 or stopping():
                    return found(value)
                event.wait(remaining)
            finally:
                waiters.leave(n, event)

    return app
