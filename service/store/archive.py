"""The archive: every finished match, in the SQL database, for good.

A finished match is archived once, by id, from Redis (``service.background.
archiver``): its signed record, what a spectator sees of it at the end, and
the columns it is searched by. Redis forgets it afterwards; reads fall back
here. Tables (SQLAlchemy Core; Alembic migrates them,
``service/store/migrations``):

- ``matches``: one row per match; newest first by (``ended_ms``, ``id``),
  the key of every page (keyset pagination: a page costs the same however
  deep it is and however large the archive);
- ``match_bots``: one row per bot kind that played in a match, with the
  match's game and end, so that a search by bot walks an index in order;
- ``match_players``: one row per seat a player held (issue 36), with the
  match's game and end: a player's finished matches, newest first.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from service.store.database import retried_when_locked

log = logging.getLogger(__name__)

metadata = sa.MetaData()

matches = sa.Table(
    "matches",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.Column("ended_ms", sa.BigInteger, nullable=False),
    sa.Column("archived_ms", sa.BigInteger, nullable=False),
    # the match's version when archived: a later write (a rematch offered)
    # updates ``final`` only when newer
    sa.Column("version", sa.Integer, nullable=False),
    sa.Column("seeded", sa.Boolean, nullable=False),  # a client chose the seed (practice)
    sa.Column("seats", sa.Text, nullable=False),  # JSON: [{seat, name, bot}]
    sa.Column("outcome", sa.Text, nullable=False),  # JSON: the outcome, seed and salt revealed
    sa.Column("final", sa.Text, nullable=False),  # JSON: the match as a spectator saw it last
    sa.Column("record", sa.Text, nullable=False),  # JSON: the signed record
    sa.Index("matches_newest", "ended_ms", "id"),
    sa.Index("matches_game_newest", "game", "ended_ms", "id"),
)

match_bots = sa.Table(
    "match_bots",
    metadata,
    sa.Column(
        "match_id",
        sa.String(32),
        sa.ForeignKey("matches.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("bot", sa.String(64), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("ended_ms", sa.BigInteger, nullable=False),
    sa.Index("match_bots_newest", "bot", "ended_ms", "match_id"),
    sa.Index("match_bots_game_newest", "game", "bot", "ended_ms", "match_id"),
)

match_players = sa.Table(
    "match_players",
    metadata,
    sa.Column(
        "match_id",
        sa.String(32),
        sa.ForeignKey(matches.c.id, ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("seat", sa.Integer, primary_key=True),
    sa.Column("player_id", sa.String(32), nullable=False),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("ended_ms", sa.BigInteger, nullable=False),
    sa.Index("match_players_newest", "player_id", "ended_ms", "match_id"),
    sa.Index("match_players_game_newest", "player_id", "game", "ended_ms", "match_id"),
)


@dataclass(frozen=True)
class Archived:
    """One finished match as the archive keeps it."""

    id: str
    game: str
    created_ms: int
    ended_ms: int
    archived_ms: int
    version: int
    seeded: bool
    seats: list[dict[str, Any]]  # [{seat, name, bot}, with player and bot_account if a player's]
    outcome: dict[str, Any]
    final: dict[str, Any]
    record: dict[str, Any]
    # a rated match's rating changes (service.domain.ratings), written with it
    ratings: list[dict[str, Any]] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        dumps = orjson.dumps
        return {
            "id": self.id,
            "game": self.game,
            "created_ms": self.created_ms,
            "ended_ms": self.ended_ms,
            "archived_ms": self.archived_ms,
            "version": self.version,
            "seeded": self.seeded,
            "seats": dumps(self.seats).decode(),
            "outcome": dumps(self.outcome).decode(),
            "final": dumps(self.final).decode(),
            "record": dumps(self.record).decode(),
        }

    def bots(self) -> list[str]:
        return sorted({seat["bot"] for seat in self.seats if seat.get("bot")})

    def players(self) -> list[dict[str, Any]]:
        """The ``match_players`` rows: one per seat a player held."""
        return [
            {
                "match_id": self.id,
                "seat": seat["seat"],
                "player_id": seat["player"],
                "game": self.game,
                "ended_ms": self.ended_ms,
            }
            for seat in self.seats
            if seat.get("player")
        ]


# What the archive reads of ``service.store.players``'s table (which imports
# this module): whether a player was deleted.
player_table = sa.table("players", sa.column("id"), sa.column("deleted_ms"))
DELETED_NAME = "deleted player"  # a deleted player's name, everywhere it is kept
RENAME_BATCH = 50  # matches renamed per transaction


class Archive:
    """Finished matches in the database ``engine`` points to. ``signer``:
    what signs a record again (with the record key of now) once a deleted
    player's name is taken out of it; set by the application factory."""

    def __init__(
        self, engine: sa.Engine, signer: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    ) -> None:
        self.engine = engine
        self.signer = signer
        # what keeps ratings (service.store.ratings.Ratings, which imports this
        # module): a rated match's are written in its transaction; set by the
        # application factory (None: not written)
        self.ratings: Any = None
        self._insert = pg_insert if engine.dialect.name == "postgresql" else sqlite_insert

    def put(self, archived: Archived) -> bool:
        """Keep ``archived``, once per id, in one transaction: True when it
        was new. Archived again (a worker that died before Redis heard of
        it; a later write to the finished match), the record stays the
        first one, and the final answer is replaced only by a newer one."""
        row = archived.row()
        insert = self._insert(matches).values(row).on_conflict_do_nothing()
        newer = (
            sa.update(matches)
            .where(matches.c.id == archived.id, matches.c.version < archived.version)
            .values(final=row["final"], version=archived.version)
        )
        bots = [
            {
                "match_id": archived.id,
                "bot": bot,
                "game": archived.game,
                "ended_ms": archived.ended_ms,
            }
            for bot in archived.bots()
        ]
        seated = archived.players()
        with self.engine.begin() as connection:
            # new exactly when the insert took (PostgreSQL's waits for a
            # concurrent one of the same id to end first)
            new = connection.execute(insert.returning(matches.c.id)).first() is not None
            if not new:
                connection.execute(newer)
            else:
                if bots:
                    connection.execute(
                        self._insert(match_bots).values(bots).on_conflict_do_nothing()
                    )
                if seated:
                    connection.execute(
                        self._insert(match_players).values(seated).on_conflict_do_nothing()
                    )
                if archived.ratings and self.ratings is not None:
                    self.ratings.write(connection, archived)
            if seated:
                self._rename_deleted(connection, archived.id, [r["player_id"] for r in seated])
        return new

    def _rename_deleted(
        self, connection: sa.Connection, match_id: str, player_ids: list[str]
    ) -> None:
        """Rename the seats of ``match_id``'s deleted players (deleted while
        it was archived, or before: its Redis copy still had their names).
        The players' rows are read locked, so that a deletion either ends
        before (seen here) or waits until this match is written (and the
        deletion's own renaming finds it): no name slips through."""
        deleted = sa.select(player_table.c.id).where(
            player_table.c.id.in_(player_ids), player_table.c.deleted_ms.is_not(None)
        )
        if connection.dialect.name == "postgresql":
            deleted = deleted.with_for_update(read=True)
        gone = set(connection.execute(deleted).scalars())
        if gone:
            self._rename(connection, match_id, gone)

    def _rename(self, connection: sa.Connection, match_id: str, player_ids: set[str]) -> bool:
        """Name the seats ``player_ids`` held in ``match_id`` "deleted player"
        in its seats, its final answer and its record (signed again); True
        when a name changed."""
        row = connection.execute(
            sa.select(matches.c.seats, matches.c.final, matches.c.record).where(
                matches.c.id == match_id
            )
        ).first()
        if row is None:
            return False
        seats = orjson.loads(row.seats)
        held = {seat["seat"] for seat in seats if seat.get("player") in player_ids}
        final, record = orjson.loads(row.final), orjson.loads(row.record)
        changed = False
        for listing in (seats, final.get("seats") or [], record.get("seats") or []):
            for listed in listing:
                if listed.get("seat") in held and listed.get("name") != DELETED_NAME:
                    listed["name"] = DELETED_NAME
                    changed = True
        if not changed:
            return False
        if self.signer is not None and "signature" in record:
            record = self.signer(record)
        connection.execute(
            sa.update(matches)
            .where(matches.c.id == match_id)
            .values(
                seats=orjson.dumps(seats).decode(),
                final=orjson.dumps(final).decode(),
                record=orjson.dumps(record).decode(),
            )
        )
        return True

    def archived_since(self, player_id: str, since_ms: int) -> list[tuple[str, str]]:
        """The (game, id) of the player's matches archived at ``since_ms`` or
        later (Redis may still have them)."""
        query = (
            sa.select(match_players.c.game, match_players.c.match_id)
            .join(matches, matches.c.id == match_players.c.match_id)
            .where(match_players.c.player_id == player_id, matches.c.archived_ms >= since_ms)
        )
        with self.engine.connect() as connection:
            return [(row.game, row.match_id) for row in connection.execute(query)]

    @retried_when_locked
    def rename_player(self, player_id: str) -> list[tuple[str, str]]:
        """Name the deleted player ``player_id`` "deleted player" in every
        archived match it held a seat in (seats, final answer, record signed
        again), a batch of matches per transaction; the (game, id) of the
        matches changed."""
        changed: list[tuple[str, str]] = []
        after: tuple[int, str] | None = None
        while True:
            query = sa.select(
                match_players.c.ended_ms, match_players.c.match_id, match_players.c.game
            )
            query = query.where(match_players.c.player_id == player_id)
            if after is not None:
                query = query.where(
                    sa.tuple_(match_players.c.ended_ms, match_players.c.match_id)
                    < sa.tuple_(*after)
                )
            order = (match_players.c.ended_ms.desc(), match_players.c.match_id.desc())
            with self.engine.begin() as connection:
                batch = connection.execute(query.order_by(*order).limit(RENAME_BATCH)).all()
                for row in batch:
                    if self._rename(connection, row.match_id, {player_id}):
                        changed.append((row.game, row.match_id))
            if len(batch) < RENAME_BATCH:
                return changed
            after = (batch[-1].ended_ms, batch[-1].match_id)

    def get(self, match_id: str) -> sa.Row | None:
        """The archived match ``match_id``: its game, final answer and record (JSON text)."""
        query = sa.select(matches.c.id, matches.c.game, matches.c.final, matches.c.record).where(
            matches.c.id == match_id
        )
        with self.engine.connect() as connection:
            return connection.execute(query).first()

    def final(self, game: str, match_id: str) -> dict[str, Any] | None:
        text = self._read(matches.c.final, game, match_id)
        return None if text is None else orjson.loads(text)

    def record(self, game: str, match_id: str) -> dict[str, Any] | None:
        text = self._read(matches.c.record, game, match_id)
        return None if text is None else orjson.loads(text)

    def record_text(self, game: str, match_id: str) -> bytes | None:
        """The signed record as kept; None also when the database cannot
        answer (the record is then built from Redis, if Redis has it)."""
        try:
            text = self._read(matches.c.record, game, match_id)
        except sa.exc.OperationalError as error:
            log.warning("the archive is unavailable: %s", error)
            return None
        return None if text is None else text.encode()

    def _read(self, column: sa.Column, game: str, match_id: str) -> str | None:
        """One text column of ``game``'s archived match ``match_id`` (a
        record may be megabytes: only the column asked for is read)."""
        query = sa.select(column).where(matches.c.id == match_id, matches.c.game == game)
        with self.engine.connect() as connection:
            return connection.execute(query).scalar()

    def has(self, match_id: str) -> bool:
        query = sa.select(matches.c.id).where(matches.c.id == match_id)
        with self.engine.connect() as connection:
            return connection.execute(query).first() is not None
