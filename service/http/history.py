"""Finished matches, from the archive: ``/v1/matches`` (a search, page by
page) and ``/v1/matches/export`` (every signed record of a search, as
NDJSON). How the archive is searched: ``service.store.searches``."""

from __future__ import annotations

import contextlib
import datetime
import itertools
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import sqlalchemy as sa
from flask import Response, current_app, request
from flask.views import MethodView
from marshmallow import Schema, ValidationError, fields, validate

from engines import GAMES
from service.domain.problems import Problem
from service.http.answers import PROBLEMS, json_response, matches
from service.http.arguments import Blueprint
from service.http.contract import header_ref, problem_answer
from service.http.schemas import RecordSeatSchema
from service.http.streams import address as client_address
from service.http.streams import answer as stream_answer
from service.store import searches
from service.store.allowances import hold, holder_key, release, renew
from service.store.archive import Archive

log = logging.getLogger(__name__)

NDJSON = "application/x-ndjson"
PLAIN = "text/plain"
PAGE_LIMIT = 100
EXPORT_LIMIT = 1_000_000
# Exports at once (LUDOTHEQUE_EXPORTS_PER_*): each holds a database connection (of
# the pool's five, plus five overflow) for as long as the client reads.
EXPORT_RETRY_AFTER_S = 10
# An export's slot per address is a lease in Redis, renewed while it runs:
# a process that died holding one frees it this long after.
EXPORT_LEASE_S = 60
# A page of the first matches changes as matches end, a page further on only
# when a match is archived late: a client or a shared cache may reuse it
# this long.
PAGE_CACHE_CONTROL = "public, max-age=5"
EXPORT_CACHE_CONTROL = "no-store"


class Cursor(fields.String):
    """An opaque cursor (a page's ``next``), loaded as the key it names."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> tuple[int, str]:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            return searches.decode_cursor(text)
        except ValueError:
            raise ValidationError("not a cursor: pass a page's `next` as it is") from None


BOT_KIND = validate.Regexp(r"^[a-z0-9_-]{1,64}$", error="a bot kind, e.g. random, greedy, mcts")


# RFC 3339's date-time (section 5.6), nothing else that ISO 8601 or Python allows
RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2})(\.\d{1,18})?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


class Rfc3339(fields.AwareDateTime):
    """An RFC 3339 date-time with its offset (``2026-11-28T09:30:00Z``,
    ``...T10:30:00.250+01:00``), and only that."""

    def _deserialize(self, value: Any, attr: Any, data: Any, **kwargs: Any) -> datetime.datetime:
        found = RFC3339.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            raise ValidationError("not an RFC 3339 date-time, such as 2026-11-28T09:30:00Z")
        moment, fraction, offset = found.groups()
        # Python reads microseconds at most; a finer part counts as one more
        # microsecond, so that a millisecond rounds up as it should
        fraction = fraction or ""
        text = moment.upper() + fraction[:7] + offset.upper()
        read = super()._deserialize(text, attr, data, **kwargs)
        if fraction[7:].strip("0"):
            read += datetime.timedelta(microseconds=1)
        return read


class SearchQuerySchema(Schema):
    game = fields.String(
        validate=validate.OneOf(sorted(GAMES)),
        metadata={"description": "only matches of this game"},
    )
    bot = fields.String(
        validate=BOT_KIND,
        metadata={
            "description": "only matches in which a bot of this kind played a seat "
            "(`random`, `greedy`, `mcts`, ...)"
        },
    )
    player = fields.String(
        validate=[
            validate.Regexp(r"^[0-9a-f]{32}$", error="a player id: 32 hexadecimal digits"),
            validate.Length(equal=32),  # ($ lets a trailing newline through)
        ],
        metadata={"description": "only matches in which this player (its public id) held a seat"},
    )
    since = Rfc3339(
        format="iso",
        metadata={"description": "only matches that ended at or after this time (RFC 3339)"},
    )
    until = Rfc3339(
        format="iso",
        metadata={"description": "only matches that ended before this time (RFC 3339)"},
    )


class MatchesQuerySchema(SearchQuerySchema):
    cursor = Cursor(
        validate=validate.Length(min=1, max=80),
        metadata={"description": "the `next` of the previous page, as it is"},
    )
    limit = fields.Integer(load_default=20, validate=validate.Range(min=1, max=PAGE_LIMIT))


class ExportQuerySchema(SearchQuerySchema):
    limit = fields.Integer(
        validate=validate.Range(min=1, max=EXPORT_LIMIT),
        metadata={"description": "at most this many records (absent: every one)"},
    )


class ArchivedLinksSchema(Schema):
    match = fields.String(required=True, metadata={"description": "the match's URL path"})
    record = fields.String(required=True, metadata={"description": "its signed record's"})
    replay = fields.String(
        required=True, metadata={"description": "its replay's, step by step (`/play#replay/G/ID`)"}
    )


class ArchivedSeatSchema(RecordSeatSchema):
    player = fields.String(metadata={"description": "the player who held it, if one did"})
    bot_account = fields.Boolean(metadata={"description": "that player is a bot account"})


class ArchivedMatchSchema(Schema):
    """A finished match as the archive lists it: what a spectator saw at the end."""

    id = fields.String(required=True)
    game = fields.String(required=True)
    created_at = fields.DateTime(required=True, metadata={"description": "RFC 3339, UTC"})
    ended_at = fields.DateTime(required=True, metadata={"description": "RFC 3339, UTC"})
    seats = fields.List(fields.Nested(ArchivedSeatSchema), required=True)
    outcome = fields.Dict(
        required=True,
        metadata={
            "description": "the outcome as the match's answer gave it at the end: the game's "
            "outcome (`DekalOutcome`, ...) with the seed and salt revealed"
        },
    )
    seeded = fields.Boolean(
        required=True,
        metadata={"description": "true when the creator chose the seed (practice)"},
    )
    links = fields.Nested(ArchivedLinksSchema, required=True)


class MatchesPageSchema(Schema):
    matches = fields.List(
        fields.Nested(ArchivedMatchSchema),
        required=True,
        metadata={"description": "newest first (by end, then id)"},
    )
    next = fields.String(
        allow_none=True,
        required=True,
        metadata={"description": "pass it as ?cursor= for the next page; null at the end"},
    )


EXPORT_RESPONSE = {
    "description": "NDJSON: one finished match's signed record per line (as "
    "`GET /v1/games/G/matches/{id}/record` gives it: check one with `ludotheque verify`), "
    "newest first. The answer is streamed: a client may stop reading at any time. The "
    "same lines come as `text/plain` to a client that asks for it alone (`Accept`), as "
    "client generators that know no NDJSON do.",
    "headers": {
        "Cache-Control": header_ref("Cache-Control"),
        "X-Accel-Buffering": header_ref("X-Accel-Buffering"),
    },
    "content": {
        NDJSON: {"schema": {"type": "string"}},
        PLAIN: {"schema": {"type": "string"}},
    },
}
MALFORMED = (
    "422",
    problem_answer(
        "A query argument that is not one (invalid_request): a cursor that is not a page's "
        "`next`, a time that is not RFC 3339 with its offset, a limit out of range, an "
        "unknown game"
    ),
)
TOO_MANY_REQUESTS = ("429", problem_answer(PROBLEMS[429].split(";")[0]))
TOO_MANY_EXPORTS = (
    "429",
    problem_answer(
        "Over a limit, with Retry-After: too_many_requests; too_many_exports: this address, "
        "or this server process, has as many exports under way as it may"
    ),
)
NO_ARCHIVE = (
    "503",
    problem_answer(
        "No archive (archive_unavailable): this deployment keeps no database of finished "
        "matches (Retry-After: 3600), or that database is unavailable (Retry-After: 1)"
    ),
)


def archive() -> Archive:
    """The app's archive; 503 ``archive_unavailable`` when it keeps none."""
    found = current_app.extensions.get("ludotheque.archive")
    if found is None:
        raise Problem(
            503,
            "archive_unavailable",
            "this deployment keeps no archive of finished matches (no database is "
            "configured: LUDOTHEQUE_DATABASE_URL), so it cannot list or export them",
            # every 503 says when to come back; a configuration changes in hours, if ever
            headers={"Retry-After": "3600"},
        )
    return found


def unavailable(error: Exception) -> Problem:
    log.warning("archive unavailable: %s", error)
    return Problem(
        503,
        "archive_unavailable",
        "the archive's database is unavailable; retry later",
        headers={"Retry-After": "1"},
    )


def search_of(query: dict[str, Any]) -> searches.Search:
    return searches.Search(
        game=query.get("game"),
        bot=query.get("bot"),
        since_ms=searches.ms_at(query.get("since")),
        until_ms=searches.ms_at(query.get("until")),
        player=query.get("player"),
    )


def rfc3339(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def item(row: sa.Row) -> dict[str, Any]:
    """A page's entry: only what a spectator of the finished match saw."""
    path = f"/v1/games/{row.game}/matches/{row.id}"
    seats = [
        {"seat": seat["seat"], "name": seat.get("name"), "bot": seat.get("bot")}
        | ({"player": seat["player"]} if seat.get("player") else {})
        | ({"bot_account": True} if seat.get("bot_account") else {})
        for seat in orjson.loads(row.seats)
    ]
    return {
        "id": row.id,
        "game": row.game,
        "created_at": rfc3339(row.created_ms),
        "ended_at": rfc3339(row.ended_ms),
        "seats": seats,
        "outcome": orjson.Fragment(row.outcome),  # as stored: written by the server
        "seeded": bool(row.seeded),
        "links": {"match": path, "record": f"{path}/record", "replay": f"{path}/replay"},
    }


class Exports:
    """Exports under way: per client address across every process (a lease
    in Redis, ``service.store.allowances``, renewed while the export runs),
    and in this process whoever asks. A slot is taken before the answer
    starts and given back when it ends, however it ends (read to the end,
    the client gone, or stalled: ``LUDOTHEQUE_EXPORT_STALL_S``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0

    def take(self, address: str, per_address: int, per_process: int) -> Callable[[], None]:
        """The export's slots, or 429 ``too_many_exports``; returns what
        renews them (call it as the export goes on)."""
        key, member = holder_key("exports", address), uuid.uuid4().hex
        store = matches().store.client  # the answer's stream runs out of the app's context
        with self.lock:
            if self.running >= per_process:
                raise too_many_exports(per_address, per_process)
            self.running += 1
        try:
            (held,) = hold(store, [(key, per_address)], member, EXPORT_LEASE_S)
        except BaseException:
            self.give_back()
            raise
        if not held:
            self.give_back()
            raise too_many_exports(per_address, per_process)
        renewed = [time.monotonic()]

        def renewing(done: bool = False) -> None:
            if done:
                release(store, [key], member)
            elif time.monotonic() - renewed[0] > EXPORT_LEASE_S / 3:
                renewed[0] = time.monotonic()
                renew(store, [key], member, EXPORT_LEASE_S)

        return renewing

    def give_back(self) -> None:
        with self.lock:
            self.running -= 1


def too_many_exports(per_address: int, per_process: int) -> Problem:
    return Problem(
        429,
        "too_many_exports",
        f"at most {per_address} export(s) at once per address and {per_process} per server "
        "process: retry when one has ended",
        headers={"Retry-After": str(EXPORT_RETRY_AFTER_S)},
    )


# An export is written in pieces of at most this: its client's progress is
# seen piece by piece
PIECE = 64 * 1024


class Watch:
    """An export under way, watched from beside it: its lease renewed while
    it runs (however slowly its client reads), and, under gunicorn, its
    connection cut when the client has taken no piece for ``stall_s``
    (the blocked write then fails, the answer closes, the slots go back)."""

    def __init__(self, renewing: Callable[[], None], stall_s: float) -> None:
        self.renewing = renewing
        self.stall_s = stall_s
        self.answer = stream_answer()  # None: not under gunicorn's gevent workers
        self.progress = time.monotonic()
        self.ended = threading.Event()
        threading.Thread(target=self._watch, name="export-watch", daemon=True).start()

    def moved(self) -> None:
        """The client took the last piece."""
        self.progress = time.monotonic()

    def end(self) -> None:
        self.ended.set()

    def _watch(self) -> None:
        while not self.ended.wait(min(self.stall_s, EXPORT_LEASE_S / 3) / 2):
            self.renewing()
            if self.answer is not None and time.monotonic() - self.progress > self.stall_s:
                log.info("an export's client took nothing for %s s: cut off", self.stall_s)
                with contextlib.suppress(OSError):
                    self.answer.sock.shutdown(socket.SHUT_RDWR)
                return


def ndjson(
    first: list[str], batches: Iterator[list[str]], watch: Watch, done: Any
) -> Iterator[bytes]:
    """The records, one per line, in pieces of at most ``PIECE`` bytes."""
    try:
        for batch in itertools.chain([first] if first else [], batches):
            text = ("\n".join(batch) + "\n").encode()
            for start in range(0, len(text), PIECE):
                yield text[start : start + PIECE]
                watch.moved()
    except sa.exc.SQLAlchemyError:
        # the answer has begun: all it can do now is stop short
        log.exception("an export stopped: the archive's database failed")
    finally:
        done()


def history_blueprint() -> Blueprint:
    """``GET /v1/matches`` and ``GET /v1/matches/export``."""
    blp = Blueprint(
        "history", __name__, url_prefix="/v1", description="Finished matches: search, export"
    )
    exports = Exports()

    def documented(*answers: tuple[str, dict[str, Any]]) -> dict[str, Any]:
        return {"responses": dict(answers)}

    @blp.route("/matches")
    class Matches(MethodView):
        @blp.arguments(MatchesQuerySchema(), location="query")
        @blp.response(
            200, MatchesPageSchema, headers={"Cache-Control": header_ref("Cache-Control")}
        )
        @blp.doc(
            operationId="list_matches", **documented(MALFORMED, TOO_MANY_REQUESTS, NO_ARCHIVE)
        )
        def get(self, query: dict[str, Any]) -> Response:
            """Finished matches, newest first (by end, then id), page by page:
            by game, by a bot kind that played, by a player who held a seat
            (its public id), by when they ended (`since`
            inclusive, `until` exclusive). Each page costs the same however
            deep and however large the archive; `next` continues exactly
            after the last match shown, whatever ends meanwhile. No token,
            nothing a spectator could not see. Cacheable for 5 seconds."""
            found = archive()
            try:
                rows, last = searches.page(
                    found.engine, search_of(query), query["limit"], query.get("cursor")
                )
            except sa.exc.OperationalError as error:
                raise unavailable(error) from None
            body = {
                "matches": [item(row) for row in rows],
                "next": searches.encode_cursor(*last) if last else None,
            }
            return json_response(body, headers={"Cache-Control": PAGE_CACHE_CONTROL})

    @blp.route("/matches/export")
    class Export(MethodView):
        @blp.arguments(ExportQuerySchema(), location="query")
        @blp.doc(
            operationId="export_matches",
            **documented(("200", EXPORT_RESPONSE), MALFORMED, TOO_MANY_EXPORTS, NO_ARCHIVE),
        )
        def get(self, query: dict[str, Any]) -> Response:
            """Every signed record of a search (the filters of `GET
            /v1/matches`), newest first, one per line (NDJSON), streamed as
            the database gives them. Costly: at most one export at once per
            address (across every server process) and four per server process
            (429 `too_many_exports`, with Retry-After); a client that reads
            nothing for `LUDOTHEQUE_EXPORT_STALL_S` (30 s) is cut off."""
            found = archive()
            config = current_app.config
            address = client_address()
            renewing = exports.take(
                address,
                config["EXPORTS_PER_ADDRESS"],
                config["EXPORTS_PER_PROCESS"],
            )
            batches = searches.records(found.engine, search_of(query), query.get("limit"))
            released = threading.Event()
            watch = Watch(renewing, config["EXPORT_STALL_S"])  # a slot is to read, not to hold

            def done() -> None:
                """Give the connection and the slots back, once, whoever comes
                first: the end of the records, or the server closing the answer
                (a client gone or stalled, even before the first byte)."""
                if not released.is_set():
                    released.set()
                    watch.end()
                    batches.close()
                    exports.give_back()
                    renewing(done=True)

            try:
                first = next(batches, [])  # a database that is down answers 503, not 200
            except sa.exc.OperationalError as error:
                done()
                raise unavailable(error) from None
            except BaseException:
                done()
                raise
            response = Response(
                ndjson(first, batches, watch, done),
                mimetype=request.accept_mimetypes.best_match([NDJSON, PLAIN], NDJSON),
                headers={"Cache-Control": EXPORT_CACHE_CONTROL, "X-Accel-Buffering": "no"},
            )
            response.call_on_close(done)
            return response

    return blp
