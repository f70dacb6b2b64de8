"""One push hub per process: every event stream and long poll of this
process follows its matches through it.

The match log (a Redis stream) stays the single source of truth. The write
that appends events also publishes a tiny wake-up (the new last index) on
the match's channel, in the match's own slot (``service.store.wakeups``).
The hub holds one subscriber connection per Redis node for the matches its
followers watch, and a follower is subscribed before ``follow`` returns, so
that a follower that reads the log after following misses no wake-up; on a
wake-up the hub reads the new entries
once per match (one pipelined round trip for every match woken together)
and hands them to each local follower, which keeps its own cursor and
redaction. A wake-up is only a hint: every ``check_s`` one pipelined
``XLEN`` per followed match catches a missed one, and a follower that finds
a gap before a batch reads the gap itself, so nothing is lost or reordered.
An idle follower costs Redis nothing; an idle process one pipelined round
trip per ``check_s`` while it follows anything.

Written with ``threading``: under gevent (patched) its threads are
greenlets, under the threaded test server they are threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import orjson

from engines.core import redact_events
from service.domain.access import SEAT_CHANGES
from service.domain.commits import Commit
from service.live import shutdown as lifecycle
from service.store import wakeups
from service.store.matches import Store
from service.store.outages import STORE_ERRORS

log = logging.getLogger(__name__)

READ_CHUNK = 500  # log entries per read of one match
# A fan-out to thousands of streams lets the process's other work run every
# SLICE_S (gevent's own switch interval): a positive sleep, so that gevent
# polls for I/O before going on.
SLICE_S = 0.005
PAUSE_S = 0.0001
# A channel nobody follows stays subscribed this long (a seat follows its
# match again at its next turn); how long ``follow`` waits for Redis to
# confirm a subscription before leaving it to the periodic check.
LINGER_S = 30.0
CONFIRM_S = 1.0


# An event as one viewer may see it: its index, the event, its JSON, and
# its Server-Sent Events frame (``id: index``, ``data: JSON``). A batch
# makes them once per viewer class, and every follower of that class sends
# the same bytes.
Encoded = tuple[int, dict[str, Any], bytes, str]


@dataclass
class Batch:
    """New entries of one match's log, read once for every follower.

    ``events`` run from index ``first`` to ``last`` (empty: read it
    yourself up to ``last``); ``gone``: the match no longer exists.
    Encodings are shared by every follower that sees the same thing.
    ``state``: the match's version and JSON as the commit that made the
    batch wrote them, when that commit was this process's (a follower that
    reads the match itself once woken may take it instead of a read).
    """

    match_id: str
    events: list[dict[str, Any]]
    last: int
    gone: bool = False
    state: tuple[int, bytes] | None = None
    _encoded: dict[Any, list[Encoded]] = field(default_factory=dict)
    _wire: dict[Any, bytes] = field(default_factory=dict)

    @property
    def first(self) -> int:
        return self.events[0]["index"] if self.events else self.last + 1

    @cached_property
    def ends(self) -> bool:
        """The batch holds the match's last event."""
        return any(event["type"] == "match_over" for event in self.events)

    @cached_property
    def seat_changes(self) -> frozenset[int]:
        """The seats the batch's events take from their holders (or give)."""
        return frozenset(e["seat"] for e in self.events if e["type"] in SEAT_CHANGES)

    @cached_property
    def private_seats(self) -> frozenset[int]:
        """The seats the batch has an event for, that not everyone sees."""
        return frozenset(seat for e in self.events for seat in e.get("to") or ())

    def shown(self, seat: int | None, tag: dict[str, Any] | None) -> list[Encoded]:
        """Each event ``seat`` may see, encoded, carrying ``tag`` (the
        match's id and game on a multi-match stream)."""
        key = (seat, tag is not None)
        found = self._encoded.get(key)
        if found is None:
            found = encode(self.events, seat, tag)
            self._encoded[key] = found
        return found

    def wire(self, seat: int | None, framing: Callable[[bytes], bytes] | None) -> bytes:
        """Every frame ``seat`` may see, untagged, as one write to an event
        stream's socket (``framing``: the answer's, such as a chunk's)."""
        key = (seat, framing)
        found = self._wire.get(key)
        if found is None:
            found = "".join(shown[3] for shown in self.shown(seat, None)).encode()
            if found and framing is not None:
                found = framing(found)
            self._wire[key] = found
        return found


def encode(
    events: Iterable[dict[str, Any]], seat: int | None, tag: dict[str, Any] | None
) -> list[Encoded]:
    found = []
    for event in events:
        index = event["index"]
        for shown in redact_events([event], seat):
            body = orjson.dumps((tag | shown) if tag else shown)
            found.append((index, event, body, f"id: {index}\ndata: {body.decode()}\n\n"))
    return found


class Direct(Protocol):
    """What writes a batch to a follower's client itself, from the hub's
    thread, while the follower waits (``service.live.followers.Shortcut``)."""

    owes: bytes  # bytes the socket did not take at once
    wrote: float  # when it last sent something (monotonic)

    def write(self, batch: Batch) -> bool:
        """Send ``batch`` now, without waiting; False: not sent, queue it."""

    def pay(self) -> None:
        """Send what is owed (from the follower's own thread)."""


class Follower:
    """One stream or long poll: an inbox of batches the hub fills, or,
    with ``direct``, writes itself while the follower waits for it.

    ``reads_itself``: the follower reads the match itself once woken (a
    long poll of one's turn) and needs no events: the hub wakes it from the
    wake-up itself, with an empty batch, without reading the log first."""

    def __init__(
        self, match_ids: Iterable[str], direct: Direct | None = None, reads_itself: bool = False
    ) -> None:
        self.match_ids = list(dict.fromkeys(match_ids))
        self.inbox: deque[Batch] = deque()
        self.ready = threading.Event()
        self.direct = direct
        self.reads_itself = reads_itself
        self.waiting = False  # in ``take``, with nothing in the inbox

    def deliver(self, batch: Batch) -> None:
        direct = self.direct
        idle = direct is not None and self.waiting and not self.inbox and not direct.owes
        if idle and direct.write(batch):
            if direct.owes:
                self.ready.set()  # the follower sends the rest
            return
        self.inbox.append(batch)
        self.ready.set()

    def poke(self) -> None:
        self.ready.set()

    def take(self, timeout: float) -> list[Batch]:
        """The batches delivered so far, waiting up to ``timeout`` for one."""
        if not self.inbox:
            self.waiting = True
            try:
                self.ready.wait(timeout)
            finally:
                self.waiting = False
        self.ready.clear()
        taken = []
        while self.inbox:
            taken.append(self.inbox.popleft())
        return taken


class Listener:
    """One subscriber connection to one Redis node, for the channels of the
    followed matches that live there; runs in its own thread.

    A follower's channels are subscribed by ``follow``'s own thread, at
    once, and ``follow`` returns once Redis has confirmed them: a wake-up
    published after that reaches this listener. (Subscribing on the
    listener's next turn lost the wake-ups published meanwhile.) A channel
    nobody follows any more stays subscribed for ``LINGER_S``: the seat
    whose turn comes back follows the same match again a moment later.
    """

    def __init__(self, hub: Hub, connect: wakeups.Connect, sharded: bool) -> None:
        self.hub = hub
        self.connect = connect
        self.sharded = sharded
        self.wanted: set[str] = set()
        self.dropped: dict[str, float] = {}  # channel: when its last follower left
        self.sent: set[str] = set()  # subscribed on this connection
        self.confirmed: set[str] = set()  # ... and confirmed by Redis
        self.pubsub: Any = None  # while connected
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self.run, name="ludotheque-hub", daemon=True)
        self.thread.start()

    def add(self, channels: set[str]) -> None:
        """Follow ``channels``: subscribe now what is not subscribed yet."""
        with self.changed:
            self.wanted |= channels
            for channel in channels:
                self.dropped.pop(channel, None)
            self._subscribe(channels - self.sent)

    def drop(self, channels: set[str], linger: bool = True) -> None:
        """Nobody follows ``channels`` any more (they linger, then go; without
        ``linger``, at the next sweep)."""
        now = time.monotonic() if linger else time.monotonic() - LINGER_S
        with self.changed:
            self.wanted -= channels
            for channel in channels:
                self.dropped[channel] = now

    def wait_confirmed(self, channels: set[str], timeout: float) -> bool:
        """Wait until Redis has confirmed the subscription to ``channels``."""
        with self.changed:
            return self.changed.wait_for(
                lambda: channels <= self.confirmed or self.hub.stopped, timeout
            )

    def _subscribe(self, channels: set[str]) -> None:
        # under ``changed``; not connected: ``listen`` subscribes on connecting
        if not channels or self.pubsub is None:
            return
        self.sent |= channels
        subscribe = self.pubsub.ssubscribe if self.sharded else self.pubsub.subscribe
        try:
            subscribe(*channels)
        except Exception:  # never out of ``follow``: the periodic check covers it
            log.warning("push hub: subscribing failed; the listener reconnects", exc_info=True)

    def _expire(self) -> None:
        """Unsubscribe the channels nobody has followed for ``LINGER_S``."""
        now = time.monotonic()
        with self.changed:
            gone = {c for c, since in self.dropped.items() if now - since >= LINGER_S}
            if not gone or self.pubsub is None:
                return
            for channel in gone:
                del self.dropped[channel]
            self.sent -= gone
            self.confirmed -= gone
            pubsub = self.pubsub
            (pubsub.sunsubscribe if self.sharded else pubsub.unsubscribe)(*gone)
        self.hub.forget(m for m in map(wakeups.channel_match, gone) if m is not None)

    def stop(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def run(self) -> None:
        while not self.hub.stopped:
            try:
                self.listen()
            except (*STORE_ERRORS, OSError):
                # the periodic check covers what this connection misses
                log.warning("push hub: subscriber connection lost; reconnecting", exc_info=True)
                time.sleep(0.5)

    def listen(self) -> None:
        client = self.connect()
        pubsub = client.pubsub()
        with self.changed:
            self.pubsub, self.sent, self.confirmed = pubsub, set(), set()
            self._subscribe(set(self.wanted))
        sweep = time.monotonic() + 1.0
        try:
            while not self.hub.stopped:
                message = pubsub.get_message(timeout=1.0)
                while message is not None:
                    self._handle(message)
                    message = pubsub.get_message(timeout=0)
                if time.monotonic() >= sweep:
                    self._expire()
                    sweep = time.monotonic() + 1.0
        finally:
            with self.changed:
                self.pubsub, self.sent, self.confirmed = None, set(), set()
            pubsub.close()
            client.close()

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind in ("message", "smessage"):
            match_id = wakeups.channel_match(message["channel"])
            if match_id is not None:
                self.hub.wake(match_id, int(message["data"]))
        elif kind in ("subscribe", "ssubscribe"):
            channel = message["channel"]
            channel = channel.decode() if isinstance(channel, bytes) else channel
            with self.changed:
                if channel in self.sent:
                    self.confirmed.add(channel)
                    self.changed.notify_all()


class Hub:
    """The process's followers by match, the subscriber connections, and
    the thread that reads new entries once per match and fans them out."""

    def __init__(self, store: Store, check_s: float = 1.0) -> None:
        self.store = store
        self.sharded = wakeups.sharded(store.client)
        self.check_s = check_s
        self.stopped = False
        self._lock = threading.Lock()
        self._followers: dict[str, set[Follower]] = {}
        self._known: dict[str, int] = {}  # the last index handed out, per match
        self._listeners: dict[str, Listener] = {}
        self._woken: dict[str, int] = {}
        self._wakeup = threading.Event()
        self._started = False
        self._count = 0
        # the store's error while the periodic check cannot reach it, else
        # None: followers then end (a stream with a note to reconnect)
        self.trouble: Exception | None = None

    # -- followers --------------------------------------------------------------
    def follow(self, follower: Follower) -> None:
        """Hand ``follower`` its matches' new events from now on: once this
        returns, the channels are subscribed (or ``CONFIRM_S`` has passed,
        and the periodic check covers them)."""
        with self._lock:
            self._start()
            self._count += 1
            for match_id in follower.match_ids:
                self._followers.setdefault(match_id, set()).add(follower)
            listening = self._by_listener(follower.match_ids)
            for listener, channels in listening:
                listener.add(channels)
        deadline = time.monotonic() + CONFIRM_S
        for listener, channels in listening:
            listener.wait_confirmed(channels, max(0.0, deadline - time.monotonic()))

    def unfollow(self, follower: Follower, linger: bool = True) -> None:
        """``follower`` follows no more; without ``linger``, the channels it
        alone held go at once (a match that does not exist)."""
        with self._lock:
            self._count -= 1
            left = []
            for match_id in follower.match_ids:
                followers = self._followers.get(match_id)
                if followers is not None:
                    followers.discard(follower)
                    if not followers:
                        # what it handed out is kept while the channel lingers:
                        # a wake-up of a move already known, arriving after the
                        # next follower came (the seat that made the move, now
                        # waiting), must not wake it for nothing
                        del self._followers[match_id]
                        left.append(match_id)
            for listener, channels in self._by_listener(left):
                listener.drop(channels, linger)

    def count(self) -> int:
        """How many followers this process holds."""
        return self._count

    # -- wake-ups ---------------------------------------------------------------
    def committed(self, commit: Commit) -> None:
        """A commit subscriber: a write made by this process wakes its
        followers here at once, before its wake-up has gone round Redis."""
        if commit.last:
            self.wake(commit.match["id"], commit.last, commit.version)

    def wake(self, match_id: str, last: int, version: int | None = None) -> None:
        """A hint that the log of ``match_id`` reaches ``last`` (-1: it is gone);
        ``version``: the match's version this process's commit just wrote.

        When every follower of the match reads it itself once woken (long
        polls of a turn), they are woken here and now, with an empty batch:
        no log read, and no wait for the read loop's turn and its round trip
        (under load, each of those waited for every ready greenlet of the
        process: the handoff's tail), and handed the match as this process
        just wrote it, when it did (no read once woken either). Otherwise
        the read loop reads the new entries once and hands them to every
        follower."""
        with self._lock:
            followers = self._followers.get(match_id)
            if not followers:
                return
            if last >= 0 and last <= self._known.get(match_id, 0):
                return
            if all(follower.reads_itself for follower in followers):
                if last >= 0:
                    self._known[match_id] = last
                woken = list(followers)
            else:
                self._woken[match_id] = max(last, self._woken.get(match_id, last))
                woken = None
        if woken is None:
            self._wakeup.set()
            return
        state = None
        if version is not None:
            state = self.store.written(match_id, version)
        batch = Batch(match_id, [], max(last, 0), gone=last < 0, state=state)
        for follower in woken:
            follower.deliver(batch)

    def forget(self, match_ids: Iterable[str]) -> None:
        """The channels of ``match_ids`` are no longer held: nothing is known of them."""
        with self._lock:
            for match_id in match_ids:
                if match_id not in self._followers:
                    self._known.pop(match_id, None)

    def _start(self) -> None:
        if not self._started:
            self._started = True
            threading.Thread(target=self._read_loop, name="ludotheque-hub", daemon=True).start()
            threading.Thread(target=self._check_loop, name="ludotheque-hub", daemon=True).start()

    def _by_listener(self, match_ids: list[str]) -> list[tuple[Listener, set[str]]]:
        """The channels of ``match_ids`` by the listener of their node (under the lock)."""
        found = []
        for name, (connect, channels) in wakeups.channels_by_node(
            self.store.client, match_ids
        ).items():
            if name not in self._listeners:
                self._listeners[name] = Listener(self, connect, self.sharded)
            found.append((self._listeners[name], channels))
        return found

    def _read_loop(self) -> None:
        while not self.stopped:
            self._wakeup.wait(self.check_s)
            self._wakeup.clear()
            with self._lock:
                woken, self._woken = self._woken, {}
                starts = {m: self._known.get(m) for m in woken}
            if not woken:
                continue
            try:
                self._fan_out(woken, starts)
            except STORE_ERRORS:
                log.warning("push hub: reading new events failed", exc_info=True)
                with self._lock:  # try again on the next check
                    for match_id in woken:
                        self._known.pop(match_id, None)
                time.sleep(0.2)

    def _fan_out(self, woken: dict[str, int], starts: dict[str, int | None]) -> None:
        reads = {m: after for m, after in starts.items() if woken[m] >= 0 and after is not None}
        found = self.store.events_after(reads, READ_CHUNK) if reads else {}
        handed, slice_ends = 0, time.monotonic() + SLICE_S
        for match_id, last in woken.items():
            events = found.get(match_id, [])
            top = events[-1]["index"] if events else max(last, 0)
            batch = Batch(match_id, events, top, gone=last < 0)
            with self._lock:
                if last >= 0 and top > self._known.get(match_id, 0):
                    self._known[match_id] = top
                followers = list(self._followers.get(match_id, ()))
            if len(events) == READ_CHUNK:
                self.wake(match_id, last)  # more to read: go on next round
            for follower in followers:
                follower.deliver(batch)
                handed += 1
                if handed % 64 == 0 and time.monotonic() > slice_ends:
                    time.sleep(PAUSE_S)  # requests waiting on this process go first
                    slice_ends = time.monotonic() + SLICE_S

    def _check_loop(self) -> None:
        """Catch missed wake-ups: one pipelined XLEN per followed match."""
        while not self.stopped:
            time.sleep(self.check_s)
            if lifecycle.stopping():
                self._poke_all()
                continue
            with self._lock:
                followed = list(self._followers)
            if not followed:
                self.trouble = None  # nobody to tell; the next follower's check will
                continue
            try:
                lengths = self.store.log_lengths(followed)
            except STORE_ERRORS as error:
                log.warning("push hub: the periodic check failed", exc_info=True)
                self.trouble = error
                self._poke_all()
                continue
            self.trouble = None
            for match_id, length in zip(followed, lengths, strict=True):
                self.wake(match_id, length if length else -1)

    def _poke_all(self) -> None:
        """Wake every follower, to look at the server's or the store's state."""
        with self._lock:
            everyone = {f for fs in self._followers.values() for f in fs}
        for follower in everyone:
            follower.poke()

    def stop(self) -> None:
        """Stop reading, and end the streams and long polls that follow."""
        self.stopped = True
        self._wakeup.set()
        for listener in list(self._listeners.values()):
            listener.stop()
        self._poke_all()
