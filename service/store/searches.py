"""Searching and exporting the archive (``service.store.archive``).

Every search walks one index in order, newest first, and stops as soon as
it has what it needs, so a page costs the same whatever the archive's size
and however deep it is (keyset pagination on (``ended_ms``, ``id``)):

- no filter, or a time range alone: ``matches_newest``;
- by game: ``matches_game_newest``;
- by bot: ``match_bots_newest``; by game and bot: ``match_bots_game_newest``,
  joined to ``matches`` by primary key, one row per match found;
- by player: ``match_players_newest``; by game and player:
  ``match_players_game_newest``, joined the same way (a player holds one
  seat of a match at most: one row per match); with a bot kind too, each
  match found is looked up in ``match_bots`` by primary key.

A time range is a range of that same index (``since`` inclusive, ``until``
exclusive, in ms). A cursor is the key of the last match a page showed:
the next page starts strictly after it, so matches archived meanwhile never
shift a page (those newer than the cursor are simply not on the next ones).
"""

from __future__ import annotations

import base64
import binascii
import datetime
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

import sqlalchemy as sa

from service.store.archive import match_bots, match_players, matches

# what a cursor decodes to: the last match's end (ms) and id
CURSOR_KEY = re.compile(r"^(0|[1-9][0-9]{0,15}):([0-9A-Za-z_-]{1,32})$")
EXPORT_BATCH = 500  # rows fetched at once from a server-side cursor


@dataclass(frozen=True)
class Search:
    """Which finished matches: of ``game``, with a ``bot`` of that kind, in
    which the player ``player`` (its id) held a seat, ended in
    [``since_ms``, ``until_ms``); None is no filter."""

    game: str | None = None
    bot: str | None = None
    since_ms: int | None = None
    until_ms: int | None = None
    player: str | None = None


def ms_at(moment: datetime.datetime | None) -> int | None:
    """A time as whole ms, rounded up: ``ended_ms >= ms_at(t)`` says "ended at
    or after t", ``ended_ms < ms_at(t)`` "ended before t"."""
    if moment is None:
        return None
    since_epoch = moment - datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    micros = (since_epoch.days * 86_400 + since_epoch.seconds) * 1_000_000
    return math.ceil((micros + since_epoch.microseconds) / 1000)


def encode_cursor(ended_ms: int, match_id: str) -> str:
    """An opaque, URL-safe cursor for the match (``ended_ms``, ``match_id``)."""
    raw = f"{ended_ms}:{match_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """The (ended ms, id) a cursor names; ValueError when it names none."""
    if not (0 < len(cursor) <= 80 and cursor.isascii()):
        raise ValueError("not a cursor")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        found = CURSOR_KEY.match(raw.decode("ascii"))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError("not a cursor") from None
    if found is None or encode_cursor(int(found[1]), found[2]) != cursor:
        raise ValueError("not a cursor")
    return int(found[1]), found[2]


def _query(search: Search, after: tuple[int, str] | None, columns: list[sa.Column]) -> sa.Select:
    """``columns`` of the matches of ``search`` after the key ``after``,
    newest first: the conditions and the order are on the key (end, id) of
    the table whose index serves the search."""
    query = sa.select(*columns)
    if search.player is not None:
        joined = match_players.join(matches, matches.c.id == match_players.c.match_id)
        ended, key = match_players.c.ended_ms, match_players.c.match_id
        where = [match_players.c.player_id == search.player]
        if search.game is not None:
            where.append(match_players.c.game == search.game)
        if search.bot is not None:
            joined = joined.join(
                match_bots,
                (match_bots.c.match_id == match_players.c.match_id)
                & (match_bots.c.bot == search.bot),
            )
        query = query.select_from(joined)
    elif search.bot is None:
        ended, key = matches.c.ended_ms, matches.c.id
        where = [matches.c.game == search.game] if search.game is not None else []
    else:
        query = query.select_from(match_bots.join(matches, matches.c.id == match_bots.c.match_id))
        ended, key = match_bots.c.ended_ms, match_bots.c.match_id
        where = [match_bots.c.bot == search.bot]
        if search.game is not None:
            where.append(match_bots.c.game == search.game)
    if search.since_ms is not None:
        where.append(ended >= search.since_ms)
    if search.until_ms is not None:
        where.append(ended < search.until_ms)
    if after is not None:
        where.append(sa.tuple_(ended, key) < sa.tuple_(*after))
    return query.where(*where).order_by(ended.desc(), key.desc())


PAGE_COLUMNS = [
    matches.c.id,
    matches.c.game,
    matches.c.created_ms,
    matches.c.ended_ms,
    matches.c.seeded,
    matches.c.seats,
    matches.c.outcome,
]


def page_query(search: Search, limit: int, after: tuple[int, str] | None = None) -> sa.Select:
    """The query of a page: ``limit`` + 1 rows, the last only to tell whether
    there is a next page."""
    return _query(search, after, PAGE_COLUMNS).limit(limit + 1)


def page(
    engine: sa.Engine, search: Search, limit: int, after: tuple[int, str] | None = None
) -> tuple[list[sa.Row], tuple[int, str] | None]:
    """Up to ``limit`` matches of ``search``, newest first, after the key
    ``after``; and the key to continue from (None: nothing further)."""
    with engine.connect() as connection:
        rows = connection.execute(page_query(search, limit, after)).all()
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, (rows[-1].ended_ms, rows[-1].id)


def player_page(
    engine: sa.Engine,
    player_id: str,
    limit: int,
    after: tuple[int, str] | None = None,
    archived_by_ms: int | None = None,
) -> tuple[list[sa.Row], tuple[int, str] | None]:
    """Up to ``limit`` of the player's archived matches, newest first, after
    the key ``after``, each with the player's ``seat``; only those archived
    by ``archived_by_ms`` (when a listing of the player's matches began: one
    it showed live then is not shown again from here). And the key to
    continue from (None: nothing further)."""
    query = _query(Search(player=player_id), after, [*PAGE_COLUMNS, match_players.c.seat])
    if archived_by_ms is not None:
        query = query.where(matches.c.archived_ms <= archived_by_ms)
    with engine.connect() as connection:
        rows = connection.execute(query.limit(limit + 1)).all()
    if len(rows) <= limit:
        return rows, None
    rows = rows[:limit]
    return rows, (rows[-1].ended_ms, rows[-1].id)


def export_query(search: Search, limit: int | None = None) -> sa.Select:
    query = _query(search, None, [matches.c.record])
    return query.limit(limit) if limit is not None else query


def records(
    engine: sa.Engine, search: Search, limit: int | None = None, batch: int = EXPORT_BATCH
) -> Iterator[list[str]]:
    """The signed records of ``search`` (each the stored JSON text, as it
    is), newest first, in lists of up to ``batch``: read from a server-side
    cursor on PostgreSQL (psycopg's named cursor), so that only one batch is
    ever in memory. The connection is held until the iterator ends or is
    closed."""
    with engine.connect() as connection:
        result = connection.execution_options(stream_results=True, yield_per=batch).execute(
            export_query(search, limit)
        )
        try:
            for rows in result.partitions(batch):
                yield [row[0] for row in rows]
        finally:
            result.close()  # the server-side cursor too, when the reader stops early
