"""Followers: event streams and long polls, the same thing with two framings.

A follower watches one or more matches, each as one viewer (a seat or a
spectator) from its own cursor in the match's log. It first reads what it
missed from the log, then takes what the process's push hub
(``service.live.hub``) hands it, reading any gap itself, so that it sees every
event it may see, in order, once.

Followers are bounded (issue 15): each holds one of a per-address and a
per-token allowance (counted in Redis, so across workers and pods); each
process keeps room for ordinary requests by holding at most
``followers_per_process``; and a stream lives at most ``stream_max_s``,
after which it ends and the client resumes with ``Last-Event-ID``.

A follower opened as a seat follows as that seat only while the token it
was opened for holds it (issue 31): when its log says the seat left or was
taken (``service.domain.access.ends_following``), it delivers that event and ends.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from engines.core import Game
from service.domain.access import SEAT_CHANGES, ends_following, private_to
from service.domain.problems import Problem
from service.domain.tokens import token_hash
from service.live import shutdown as lifecycle
from service.live.hub import Batch, Direct, Encoded, Follower, Hub, encode
from service.metrics import OPEN_STREAMS
from service.store import allowances
from service.store.matches import Store
from service.store.outages import STORE_GONE, ending_cleanly

READ = 500  # log entries per catch-up read


@dataclass
class Watch:
    """One match a follower follows, as one viewer, from ``cursor`` on."""

    game: Game
    match_id: str
    seat: int | None
    cursor: int
    tagged: bool = False  # events carry the match's id and game (multi-match streams)
    over: bool = False
    # a long poll reads on past match_over (a rematch is offered after it); a stream stops there
    whole_log: bool = False
    # the match's version when the seat's holder was checked: a later seat_left
    # or seat_joined of the seat ends the follower (``cut``)
    since: int = 0
    cut: bool = False
    # opened with a player token: whether that token was revoked since (which
    # ends the follower, as a change of the seat's holder does)
    revoked: Callable[[], bool] | None = None

    @property
    def tag(self) -> dict[str, Any] | None:
        return {"match": self.match_id, "game": self.game.name} if self.tagged else None


Shown = tuple[Watch, Encoded]  # the watch, and the event as its viewer sees it


def catch_up(store: Store, watch: Watch, upto: int | None = None) -> list[Shown]:
    """What ``watch`` missed in the log after its cursor (up to ``upto``)."""
    found: list[Shown] = []
    while not watch.over and (upto is None or watch.cursor < upto):
        events = store.events(watch.match_id, watch.cursor, READ)
        if upto is not None:
            events = [e for e in events if e["index"] <= upto]
        found += take(watch, encode(events, watch.seat, watch.tag))
        if events:
            watch.cursor = max(watch.cursor, events[-1]["index"])
        if len(events) < READ:
            break
    return found


def first_read(store: Store, watches: Sequence[Watch]) -> list[Shown]:
    """What followers opened at the cursors a client gave missed. A cursor
    with nothing after it is at the log's end, or past it: past it, the
    match's end and a change of the seat's hands would pass unseen (events
    at or before a cursor are skipped), so it is taken as the end (one more
    read, for such cursors only)."""
    asked = [watch.cursor for watch in watches]
    found = [shown for watch in watches for shown in catch_up(store, watch)]
    for watch, cursor in zip(watches, asked, strict=True):
        if cursor > 0 and watch.cursor == cursor:
            watch.cursor = min(cursor, store.log_end(watch.match_id))
    return found


def take(watch: Watch, shown: list[Encoded]) -> list[Shown]:
    """The shown events past the cursor, up to and with ``match_over``."""
    found = []
    for encoded in shown:
        index = encoded[0]
        if index <= watch.cursor or watch.over:
            continue
        found.append((watch, encoded))
        watch.cursor = index
        event = encoded[1]
        if event["type"] == "match_over" and not watch.whole_log:
            watch.over = True
        elif event["type"] in SEAT_CHANGES and ends_following(event, watch.seat, watch.since):
            watch.over = watch.cut = True  # the seat changed hands: nothing more as that seat
    return found


def ended(watches: Sequence[Watch]) -> bool:
    """Every watched match is over, or a watch's seat changed hands (which
    ends the whole follower: it was opened with that seat's rights)."""
    return all(watch.over for watch in watches) or any(
        watch.cut or (watch.revoked is not None and watch.revoked()) for watch in watches
    )


def follow(
    store: Store,
    hub: Hub,
    watches: Sequence[Watch],
    until: float,
    tick_s: float,
    caught_up: bool = False,
    direct: Direct | None = None,
) -> Iterator[list[Shown]]:
    """Every event each watch may see, in order, once: batches as they land
    (an empty one after ``tick_s`` with nothing sent), until every watched match is
    over or gone, ``until`` (monotonic) passes, or the server stops.
    ``caught_up``: the watches have just read the log themselves;
    ``direct``: what sends the batches the hub can while this waits."""
    if not caught_up:
        yield first_read(store, watches)
    if ended(watches):
        return
    follower = Follower((watch.match_id for watch in watches), direct)
    by_id = {watch.match_id: watch for watch in watches}
    hub.follow(follower)
    try:
        # what landed before the hub knew of this follower: the hub may have
        # read it already for others, and will not hand it out again
        missed = [shown for watch in watches for shown in catch_up(store, watch)]
        if missed:
            yield missed
        spoke = time.monotonic()  # when this follower last sent anything
        while not ended(watches):
            now = time.monotonic()
            if direct is not None:
                spoke = max(spoke, direct.wrote)
            left = until - now
            if left <= 0 or lifecycle.stopping() or hub.stopped:
                return
            found: list[Shown] = []
            batches = follower.take(max(0.0, min(spoke + tick_s - now, left)))
            if hub.trouble is not None:
                raise hub.trouble  # the store is unreachable: end, the client reconnects
            if direct is not None:
                direct.pay()  # before anything that came after it
            for batch in batches:
                watch = by_id[batch.match_id]
                if ended(watches):
                    break  # a seat changed hands: nothing after it
                if watch.over or batch.last <= watch.cursor:
                    continue
                if batch.gone:
                    watch.over = True
                    continue
                if batch.first > watch.cursor + 1:  # missed or not read by the hub
                    found += catch_up(store, watch, batch.first - 1)
                found += take(watch, batch.shown(watch.seat, watch.tag))
                watch.cursor = max(watch.cursor, batch.last)
            now = time.monotonic()
            if direct is not None:
                spoke = max(spoke, direct.wrote)
            if found or now - spoke >= tick_s:
                spoke = now
                yield found  # empty: nothing was sent for ``tick_s``
    finally:
        hub.unfollow(follower)


# -- bounds -------------------------------------------------------------------
@dataclass(frozen=True)
class Bounds:
    per_address: int = 200  # open streams and long polls per client address (0: no cap)
    per_token: int = 8  # ... per seat token
    per_process: int = 3500  # ... per server process, leaving room for other requests
    stream_max_s: float = 600  # a stream ends after this long; the client resumes
    # the quotas an app set (its client key's, service.http.credentials): its
    # ``followers`` replace ``per_address``
    set_for: Callable[[str], dict[str, Any]] | None = None

    def of_address(self, address: str) -> int:
        if self.set_for is None:
            return self.per_address
        return self.set_for(address).get("followers", self.per_address)


class Allowances:
    """Who holds how many followers, in Redis; and this process's count."""

    def __init__(self, client: Any, bounds: Bounds, hub: Hub) -> None:
        self.client = client
        self.bounds = bounds
        self.hub = hub

    def hold(
        self, address: str, tokens: Sequence[str], lease_s: float, following: int = 0
    ) -> list[str]:
        """Hold one follower for ``address`` and each of ``tokens`` for up to
        ``lease_s``; refuse with 429 (a holder at its cap) or 503 (this
        process full, not counting the ``following`` followers the caller
        has the hub hold already). Returns what to ``release``."""
        if self.bounds.per_process and self.hub.count() - following >= self.bounds.per_process:
            raise Problem(
                503,
                "too_many_followers",
                "this server process follows all it can; retry shortly",
                headers={"Retry-After": "5"},
            )
        held = [(allowances.holder_key("address", address), self.bounds.of_address(address))]
        held += [
            (allowances.holder_key("token", token_hash(t)), self.bounds.per_token) for t in tokens
        ]
        held = [(key, cap) for key, cap in held if cap > 0]
        if not held:
            return []
        member = uuid.uuid4().hex
        answers = allowances.hold(self.client, held, member, lease_s)
        keys = [key for key, _ in held]
        for (key, cap), within in zip(held, answers, strict=True):
            if not within:
                self.release([*keys, member])
                raise Problem(
                    429,
                    "too_many_followers",
                    f"at most {cap} open streams and long polls per {allowances.scope_of(key)}",
                    headers={"Retry-After": "10"},
                )
        return [*keys, member]

    def release(self, held: list[str]) -> None:
        if not held:
            return
        *keys, member = held
        allowances.release(self.client, keys, member)

    def releasing(self, held: list[str]) -> Callable[[], None]:
        """``release``, begun: its commands are sent now, and what this
        returns reads their answers (to be called once, whatever happens
        meanwhile). The caller works during the round trip (a long poll lays
        out its answer) instead of waiting for it, and by the time the
        answers are read the release is done. A client without one plain
        connection pool (a cluster) releases at once."""
        pool = getattr(self.client, "connection_pool", None)
        if not held or not isinstance(self.client, redis.Redis) or pool is None:
            self.release(held)
            return _nothing
        *keys, member = held
        try:
            connection = pool.get_connection()
        except redis.RedisError:
            return _nothing  # the lease runs out on its own
        try:
            connection.send_packed_command(
                connection.pack_commands([("ZREM", key, member) for key in keys])
            )
        except BaseException:
            connection.disconnect()
            pool.release(connection)
            if isinstance(sys.exc_info()[1], redis.RedisError):
                return _nothing
            raise

        def finish() -> None:
            try:
                for _ in keys:
                    connection.read_response()
            except BaseException:
                connection.disconnect()  # answers left unread: not for the next user
                if not isinstance(sys.exc_info()[1], redis.RedisError):
                    raise
            finally:
                pool.release(connection)

        return finish


def _nothing() -> None:
    pass


class Shortcut:
    """The hub's way to an idle one-match stream's socket: it writes a batch
    there itself, without waking the stream's greenlet, when the batch
    follows the stream's cursor and does not end the match; the stream's
    greenlet then only sends what the socket did not take at once
    (``pay``), and whatever else (a gap, the end, keep-alives) as before.
    Each batch is framed once for every stream of the same viewer.
    Only where the hub and the streams share one thread (gevent).
    Not for a batch where the stream's seat changes hands (the greenlet
    ends the stream), nor, when ``keeps_floor`` (a ticket's stream), for a
    batch with an event private to its seat (the greenlet records it)."""

    def __init__(self, watch: Watch, out: Any, keeps_floor: bool = False) -> None:
        self.watch = watch
        self.out = out  # service.server.wire.Response
        self.keeps_floor = keeps_floor
        self.owes = b""
        self.wrote = 0.0  # when it last sent something (monotonic)

    def write(self, batch: Batch) -> bool:
        watch = self.watch
        if watch.over or batch.gone or batch.ends or batch.first != watch.cursor + 1:
            return False
        if watch.revoked is not None and watch.revoked():
            return False  # the greenlet ends the stream
        seat = watch.seat
        if seat is not None and (
            seat in batch.seat_changes or (self.keeps_floor and seat in batch.private_seats)
        ):
            return False
        data = batch.wire(watch.seat, self.out.framing)
        if data:
            try:
                sent = self.out.send_now(data)
            except OSError:  # would block, or the client is gone: the greenlet finds out
                return False
            self.owes = data[sent:]
            self.wrote = time.monotonic()
        watch.cursor = batch.last
        return True

    def pay(self) -> None:
        """Send what the socket did not take (from the stream's greenlet)."""
        if self.owes:
            owes, self.owes = self.owes, b""
            self.out.send_rest(owes)


class Framing:
    """Server-Sent Events: on a one-match stream each event's ``id`` is its
    index; on a multi-match stream it is, for every watch in order, the
    index of the last event sent, joined by ``.``, so that Last-Event-ID
    resumes all of them."""

    def __init__(self, watches: Sequence[Watch]) -> None:
        self.multi = len(watches) > 1 or any(w.tagged for w in watches)
        self.sent = {id(w): w.cursor for w in watches}
        self.order = [id(w) for w in watches]

    def event(self, shown: Shown) -> str:
        watch, (index, _, body, frame) = shown
        if not self.multi:
            return frame  # made once for every follower who sees this event so
        self.sent[id(watch)] = index
        cursors = ".".join(str(self.sent[key]) for key in self.order)
        return f"id: {cursors}\ndata: {body.decode()}\n\n"

    def events(self, shown: list[Shown]) -> str:
        """Several events in one frame: one write to the socket for them all."""
        return "".join(self.event(one) for one in shown)


def parse_cursors(raw: str | None, n: int) -> list[int] | None:
    """The cursors a multi-match Last-Event-ID names (None: none given)."""
    if raw is None:
        return None
    parts = raw.strip().split(".")
    if len(parts) != n or not all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts):
        raise Problem(400, "invalid_request", f"Last-Event-ID must be {n} numbers joined by '.'")
    return [int(p) for p in parts]


def long_poll(
    store: Store,
    hub: Hub,
    allowances: Allowances,
    watch: Watch,
    limit: int,
    wait_s: float,
    address: str,
    holders: Sequence[str],
) -> bytes:
    """The log after the watch's cursor as its viewer may see it (at most
    ``limit`` events); with ``wait_s``, wait up to that long for one."""
    shown = catch_up(store, watch)
    if not shown and wait_s > 0 and not watch.over:
        held = allowances.hold(address, holders, wait_s + 30)
        try:
            until = time.monotonic() + wait_s
            for found in follow(store, hub, [watch], until, wait_s, caught_up=True):
                if found:
                    shown = found
                    break
        finally:
            allowances.release(held)
    cursor = watch.cursor
    if len(shown) > limit:
        shown, cursor = shown[:limit], shown[limit - 1][1][0]
    bodies = b",".join(encoded[2] for _, encoded in shown)
    return b'{"events":[' + bodies + b'],"next":' + str(cursor).encode() + b"}"


def open_stream(
    store: Store,
    hub: Hub,
    allowances: Allowances,
    watches: Sequence[Watch],
    finished: Sequence[bool],
    address: str,
    holders: Sequence[str],
    keepalive_s: float,
    out: Any = None,
    on_close: Callable[[], None] | None = None,
    delivered: Callable[[list[int]], None] | None = None,
) -> tuple[Iterator[str], Callable[[], None]] | None:
    """A stream of ``watches`` and what to call when it closes; None when
    every watched match is over and nothing is left to send (answer 204,
    which makes a browser's EventSource stop reconnecting). ``out``: the
    answer it is written to, when the hub may write to it (``service.server.wire``).
    ``on_close`` runs once, with the release: before the answer's last bytes
    when the stream ends itself, so that a client reconnecting at once finds
    what the stream held free. ``delivered`` (a ticket's stream) records the
    watches' cursors as of the first write and of each write with an event
    private to a followed seat, before that write: a used ticket resumes
    from there on, never earlier (``service.live.tickets``)."""
    framing = Framing(watches)
    keeps_floor = delivered is not None
    shortcut = None
    if out is not None and not framing.multi:
        shortcut = Shortcut(watches[0], out, keeps_floor)
    first = first_read(store, watches)
    for watch, done in zip(watches, finished, strict=True):
        if done:  # a finished match's log is complete: nothing more will come
            watch.over = True
    if not first and all(watch.over for watch in watches):
        return None
    bounds = allowances.bounds
    held = allowances.hold(address, holders, bounds.stream_max_s + 30)
    released = False

    def release() -> None:
        nonlocal released
        if not released:
            released = True
            allowances.release(held)
            if on_close is not None:
                on_close()

    def generate() -> Iterator[str]:
        with OPEN_STREAMS.labels(watches[0].game.name).track_inprogress():
            yield from ending_cleanly(frames(), STORE_GONE)

    def frames() -> Iterator[str]:
        try:
            # the floor is kept before the write it covers: a reconnection
            # racing the write (the client read it and came back at once,
            # or someone else holds the URL) must find it already raised
            if first and delivered is not None:
                delivered([watch.cursor for watch in watches])
            yield "retry: 1000\n\n" + framing.events(first)
            until = time.monotonic() + bounds.stream_max_s
            for found in follow(store, hub, watches, until, keepalive_s, True, shortcut):
                if found:  # what one wake-up brings goes out in one write
                    if delivered is not None and any(
                        private_to(encoded[1], watch.seat) for watch, encoded in found
                    ):
                        delivered([watch.cursor for watch in watches])
                    yield framing.events(found)
                elif out is not None and out.client_gone():
                    return  # a write to a closed stream may yet succeed once
                else:
                    yield ": keep-alive\n\n"
            if any(watch.cut for watch in watches):
                yield ": a seat followed here changed hands; this stream ends\n\n"
            elif not all(watch.over for watch in watches):
                yield ": this stream ends here; reconnect with Last-Event-ID\n\n"
        finally:
            release()

    return generate(), release
