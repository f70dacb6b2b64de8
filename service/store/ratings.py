"""Ratings and leaderboards: live in Redis, durable in SQL.

A rated match is rated once, in the write that ends it
(``service.domain.ratings``): the change is kept in the match and its
``match_over`` event. Applying it is idempotent, by each player's count of
rated matches (a change applies only over a stored count lower than its
own), so it is applied twice without harm:

- to Redis right after the commit (the subscriber ``applying``), and again
  by the archiver (a worker killed between the commit and the first apply
  loses nothing);
- to SQL in the archive's transaction (``write``, called by
  ``service.store.archive.Archive.put``, itself once per match id):
  ``ratings`` (upserted only by a greater count) and ``rating_changes``
  (one row per player and match).

Redis keys (one hash tag: a Lua script touches them together on a cluster):

- ``ludotheque:{ratings}:r:<game>``: hash, player id -> JSON ``{"mu",
  "sigma", "matches"}`` (a player missing: a new player's rating);
- ``ludotheque:{ratings}:lb:<game>`` and ``...:lb:<game>:bots``: sorted
  sets, score = display rating, of the players (the bot accounts) with at
  least ``min_matches`` rated matches, deleted players left out
  (``...:deleted``, a set);
- ``ludotheque:{ratings}:ready``: the copy is whole. When Redis has lost
  it, the next read rebuilds every hash from SQL, once, under a lock
  (``...:rebuilding``), merged by the same idempotent apply, then lists
  the boards anew from the hashes (deleting the marker rebuilds them,
  e.g. after a change of ``LUDOTHEQUE_LEADERBOARD_MIN_MATCHES``).

Known limit: a change is computed from the ratings Redis has when the
match ends. Should the apply right after a rated match fail (a worker
killed, Redis unreachable for that moment) and its players end another
rated match of the game before the archiver applies the first (normally
within a second), the second is computed from the ratings before the
first, and whichever of the two is applied first stands (both stay in
the history). The queue's rule, one live rated match per player and
game, keeps this to that window.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from engines import GAMES
from service.domain.commits import Commit, Subscriber
from service.domain.ratings import DEFAULT_MU, Rating, display, shown
from service.store.archive import Archived, metadata
from service.store.player_events import PlayerEvents

log = logging.getLogger(__name__)

PREFIX = "ludotheque:{ratings}"
READY = f"{PREFIX}:ready"
REBUILDING = f"{PREFIX}:rebuilding"
DELETED = f"{PREFIX}:deleted"
REBUILD_BATCH = 500  # players applied per Lua call while rebuilding

ratings = sa.Table(
    "ratings",
    metadata,
    sa.Column("game", sa.String(32), primary_key=True),
    sa.Column("player_id", sa.String(32), primary_key=True),
    sa.Column("mu", sa.Float, nullable=False),
    sa.Column("sigma", sa.Float, nullable=False),
    sa.Column("matches", sa.Integer, nullable=False),
    sa.Column("updated_ms", sa.BigInteger, nullable=False),
)

rating_changes = sa.Table(
    "rating_changes",
    metadata,
    sa.Column(
        "match_id",
        sa.String(32),
        sa.ForeignKey("matches.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("player_id", sa.String(32), primary_key=True),
    sa.Column("game", sa.String(32), nullable=False),
    sa.Column("seat", sa.Integer, nullable=False),
    sa.Column("rank", sa.Integer, nullable=False),
    sa.Column("mu_before", sa.Float, nullable=False),
    sa.Column("sigma_before", sa.Float, nullable=False),
    sa.Column("mu_after", sa.Float, nullable=False),
    sa.Column("sigma_after", sa.Float, nullable=False),
    sa.Column("matches", sa.Integer, nullable=False),  # rated matches after this one
    sa.Column("ended_ms", sa.BigInteger, nullable=False),
    sa.Index("rating_changes_newest", "player_id", "ended_ms", "match_id"),
    sa.Index("rating_changes_game_newest", "player_id", "game", "ended_ms", "match_id"),
)

# What this module reads of ``service.store.players``'s table (which imports it).
player_table = sa.table(
    "players", sa.column("id"), sa.column("name"), sa.column("bot"), sa.column("deleted_ms")
)


def ratings_key(game: str) -> str:
    return f"{PREFIX}:r:{game}"


def board_key(game: str, bots: bool = False) -> str:
    return f"{PREFIX}:lb:{game}" + (":bots" if bots else "")


# KEYS: the game's hash, its board, its bots' board, the deleted players.
# ARGV: the least rated matches to be listed, then per player: id, its
# rating (JSON), display score, "1" for a bot account, its rated matches.
# A rating lands only over a lower count; the boards follow it. The players
# whose rating landed.
APPLY = """
local least = tonumber(ARGV[1])
local applied = {}
for i = 2, #ARGV, 5 do
  local player, value, score, bot = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local count = tonumber(ARGV[i + 4])
  local old = redis.call('HGET', KEYS[1], player)
  local had = -1
  if old then had = tonumber(cjson.decode(old)['matches']) end
  if had < count then
    redis.call('HSET', KEYS[1], player, value)
    table.insert(applied, player)
    if count >= least and redis.call('SISMEMBER', KEYS[4], player) == 0 then
      redis.call('ZADD', KEYS[2], score, player)
      if bot == '1' then redis.call('ZADD', KEYS[3], score, player) end
    end
  end
end
return applied
"""


def now_ms() -> int:
    return int(time.time() * 1000)


def write(
    connection: sa.Connection, match_id: str, game: str, ended_ms: int, changes: list[dict]
) -> None:
    """Write a rated match's ``changes`` (as ``service.domain.ratings``
    keeps them) in the archive's transaction: its ``rating_changes`` rows
    (once), and each player's ``ratings`` row unless it counts as many
    rated matches already (a later match's)."""
    if not changes:
        return
    insert = pg_insert if connection.dialect.name == "postgresql" else sqlite_insert
    rows = [
        {
            "match_id": match_id,
            "player_id": c["player"],
            "game": game,
            "seat": c["seat"],
            "rank": c["rank"],
            "mu_before": c["before"]["mu"],
            "sigma_before": c["before"]["sigma"],
            "mu_after": c["after"]["mu"],
            "sigma_after": c["after"]["sigma"],
            "matches": c["after"]["matches"],
            "ended_ms": ended_ms,
        }
        for c in changes
    ]
    connection.execute(insert(rating_changes).values(rows).on_conflict_do_nothing())
    for c in changes:
        upsert = insert(ratings).values(
            game=game, player_id=c["player"], updated_ms=now_ms(), **c["after"]
        )
        connection.execute(
            upsert.on_conflict_do_update(
                index_elements=[ratings.c.game, ratings.c.player_id],
                set_={
                    "mu": upsert.excluded.mu,
                    "sigma": upsert.excluded.sigma,
                    "matches": upsert.excluded.matches,
                    "updated_ms": upsert.excluded.updated_ms,
                },
                where=ratings.c.matches < upsert.excluded.matches,
            )
        )


class Ratings:
    """The players' ratings, leaderboards and history: Redis (``client``)
    for what is live, the database ``engine`` for the rest."""

    def __init__(self, engine: sa.Engine, client: Any, min_matches: int) -> None:
        self.engine = engine
        self.client = client
        self.min_matches = min_matches
        self._apply = client.register_script(APPLY)
        self.events = PlayerEvents(client)

    def write(self, connection: sa.Connection, archived: Archived) -> None:
        """Write the archived match's ratings in the archive's transaction."""
        write(connection, archived.id, archived.game, archived.ended_ms, archived.ratings)

    # -- Redis: applying, reading ----------------------------------------------------
    def apply(self, game: str, changes: list[dict[str, Any]], match_id: str = "") -> int:
        """Apply a rated match's ``changes`` to Redis (idempotent): how many
        landed. Each player whose change lands here (once, whichever apply
        lands it) gets a ``rated`` event (``service.store.player_events``)."""
        self.ready()
        landed = set(
            self._apply_ratings(
                game, [(c["player"], Rating.of(c["after"]), bool(c.get("bot"))) for c in changes]
            )
        )
        for c in changes:
            if c["player"] in landed:
                before = shown(Rating.of(c["before"]) if "before" in c else Rating())
                after = shown(Rating.of(c["after"]))
                event = {"type": "rated", "game": game, "match": match_id}
                self.events.append(c["player"], event | {"before": before, "after": after})
        return len(landed)

    def _apply_ratings(self, game: str, rated: Iterable[tuple[str, Rating, bool]]) -> list[str]:
        args: list[Any] = [self.min_matches]
        for player, rating, bot in rated:
            value = orjson.dumps(rating.stored())
            args += [player, value, display(rating), "1" if bot else "0", rating.matches]
        if len(args) == 1:
            return []
        keys = [ratings_key(game), board_key(game), board_key(game, bots=True), DELETED]
        return [
            p.decode() if isinstance(p, bytes) else p for p in self._apply(keys=keys, args=args)
        ]

    def strengths(self, game: str, player_ids: list[str]) -> dict[str, float]:
        """Each player's strength for the ranked queue's matchmaker: its mu,
        openskill's default for a player never rated."""
        found = self.current(game, player_ids)
        return {p: found[p].mu if p in found else DEFAULT_MU for p in player_ids}

    def current(self, game: str, player_ids: list[str]) -> dict[str, Rating]:
        """Each player's rating for ``game``; a player never rated is missing."""
        if not player_ids:
            return {}
        pipe = self.client.pipeline(transaction=False)  # one round trip when the copy is whole
        pipe.exists(READY)
        pipe.hmget(ratings_key(game), player_ids)
        ready, values = pipe.execute()
        whole = bool(ready) or self.ready()
        if not ready:
            values = self.client.hmget(ratings_key(game), player_ids)
        found = {
            player: Rating.of(orjson.loads(value))
            for player, value in zip(player_ids, values, strict=True)
            if value is not None
        }
        if not whole:  # another process rebuilds the copy: SQL's, where it knows more
            for player, rating in self._from_database(game, player_ids).items():
                if player not in found or found[player].matches < rating.matches:
                    found[player] = rating
        return found

    def _from_database(self, game: str, player_ids: list[str]) -> dict[str, Rating]:
        query = sa.select(ratings).where(
            ratings.c.game == game, ratings.c.player_id.in_(player_ids)
        )
        with self.engine.connect() as connection:
            return {
                row.player_id: Rating(row.mu, row.sigma, row.matches)
                for row in connection.execute(query)
            }

    def every_game(self, player_id: str) -> dict[str, Rating]:
        """The player's rating in every game it was rated in."""
        self.ready()
        pipe = self.client.pipeline(transaction=False)
        for game in GAMES:
            pipe.hget(ratings_key(game), player_id)
        values = pipe.execute()
        return {
            game: Rating.of(orjson.loads(value))
            for game, value in zip(GAMES, values, strict=True)
            if value is not None
        }

    def top(self, game: str, bots: bool, start: int, count: int) -> list[dict[str, Any]]:
        """Entries ``start`` (0: the best) to ``start + count - 1`` of the
        leaderboard, each with its rank, the player's public name and rating."""
        self.ready()
        if count <= 0 or start < 0:
            return []
        found = self.client.zrevrange(board_key(game, bots), start, start + count - 1)
        return self._entries(game, [p.decode() for p in found], start)

    def rank_of(self, game: str, bots: bool, player_id: str) -> int | None:
        """The player's place on the leaderboard (0: the best); None: not listed."""
        self.ready()
        return self.client.zrevrank(board_key(game, bots), player_id)

    def listed(self, game: str, bots: bool) -> int:
        self.ready()
        return int(self.client.zcard(board_key(game, bots)))

    def _entries(self, game: str, listed: list[str], start: int) -> list[dict[str, Any]]:
        if not listed:
            return []
        rated = self.current(game, listed)
        query = sa.select(player_table.c.id, player_table.c.name, player_table.c.bot).where(
            player_table.c.id.in_(listed), player_table.c.deleted_ms.is_(None)
        )
        with self.engine.connect() as connection:
            known = {row.id: row for row in connection.execute(query)}
        entries = []
        for place, player in enumerate(listed, start=start + 1):
            if player not in known or player not in rated:  # deleted meanwhile
                continue
            rating = rated[player]
            entries.append(
                {
                    "rank": place,
                    "player": player,
                    "name": known[player].name,
                    "bot": bool(known[player].bot),
                    "rating": rating,
                }
            )
        return entries

    @staticmethod
    def forget_player_in(client: Any, player_id: str) -> None:
        """A deleted player leaves every leaderboard, and is never listed again."""
        pipe = client.pipeline(transaction=False)
        pipe.sadd(DELETED, player_id)
        for game in GAMES:
            pipe.zrem(board_key(game), player_id)
            pipe.zrem(board_key(game, bots=True), player_id)
        pipe.execute()

    # -- the copy in Redis, rebuilt from SQL -------------------------------------------
    def ready(self) -> bool:
        """Rebuild the copy from SQL when Redis has lost it (no marker); False
        while another process rebuilds it."""
        if self.client.exists(READY) == 0:
            self.rebuild()
            return self.client.exists(READY) == 1
        return True

    def rebuild(self) -> None:
        """Merge every rating in SQL into Redis (a rating Redis has with as
        many rated matches or more stays), the boards with them, then mark
        the copy whole; one process at a time (the others read on meanwhile)."""
        if not self.client.set(REBUILDING, "1", nx=True, ex=60):
            return
        try:
            query = (
                sa.select(ratings, player_table.c.bot, player_table.c.deleted_ms)
                .join(player_table, player_table.c.id == ratings.c.player_id)
                .order_by(ratings.c.game)
            )
            with self.engine.connect() as connection:
                deleted = list(
                    connection.execute(
                        sa.select(player_table.c.id).where(player_table.c.deleted_ms.is_not(None))
                    ).scalars()
                )
                if deleted:
                    self.client.sadd(DELETED, *deleted)
                batch: list[tuple[str, Rating, bool]] = []
                game = None
                for row in connection.execute(query):
                    if game != row.game or len(batch) >= REBUILD_BATCH:
                        if game is not None:
                            self._apply_ratings(game, batch)
                        game, batch = row.game, []
                    rating = Rating(row.mu, row.sigma, row.matches)
                    batch.append((row.player_id, rating, bool(row.bot)))
                if game is not None:
                    self._apply_ratings(game, batch)
            for game in GAMES:
                self._relist(game)
            self.client.set(READY, "1")
            log.info("ratings and leaderboards copied into Redis from the database")
        finally:
            self.client.delete(REBUILDING)

    def _relist(self, game: str) -> None:
        """List on ``game``'s boards every player of its ratings in Redis
        that should be (enough rated matches, not deleted), and no other: a
        board lost while the ratings were kept, or a minimum changed since."""
        deleted = {p.decode() for p in self.client.smembers(DELETED)}
        found = [
            (player.decode(), Rating.of(orjson.loads(value)))
            for player, value in self.client.hscan_iter(ratings_key(game), count=1000)
        ]
        for start in range(0, len(found), REBUILD_BATCH):
            chunk = found[start : start + REBUILD_BATCH]
            query = sa.select(player_table.c.id).where(
                player_table.c.id.in_([p for p, _ in chunk]), player_table.c.bot.is_(True)
            )
            with self.engine.connect() as connection:
                bots = set(connection.execute(query).scalars())
            pipe = self.client.pipeline(transaction=False)
            for player, rating in chunk:
                listed = rating.matches >= self.min_matches and player not in deleted
                for board, belongs in ((False, listed), (True, listed and player in bots)):
                    if belongs:
                        pipe.zadd(board_key(game, board), {player: display(rating)})
                    else:
                        pipe.zrem(board_key(game, board), player)
            pipe.execute()

    # -- SQL: the history ------------------------------------------------------------
    def changes(
        self, player_id: str, game: str | None, limit: int, after: tuple[int, str] | None
    ) -> list[dict[str, Any]]:
        """The player's rating changes, newest first, after the key ``after``
        (``ended_ms``, ``match_id``) of the page before."""
        c = rating_changes.c
        query = sa.select(rating_changes).where(c.player_id == player_id)
        if game is not None:
            query = query.where(c.game == game)
        if after is not None:
            query = query.where(sa.tuple_(c.ended_ms, c.match_id) < sa.tuple_(*after))
        query = query.order_by(c.ended_ms.desc(), c.match_id.desc()).limit(limit)
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        return [
            {
                "match": row.match_id,
                "game": row.game,
                "seat": row.seat,
                "rank": row.rank,
                "ended_ms": row.ended_ms,
                "before": Rating(row.mu_before, row.sigma_before, row.matches - 1),
                "after": Rating(row.mu_after, row.sigma_after, row.matches),
            }
            for row in rows
        ]


def applying(ratings_: Ratings) -> Subscriber:
    """The commit subscriber: a rated match that just ended has its ratings
    applied to Redis at once (the archiver applies them again: a worker
    killed in between loses nothing). Not after a write too few replicas
    confirmed: it may vanish, and the archiver applies what survived."""

    def after(commit: Commit) -> None:
        # every commit passes here: the cheap checks first (most are no end)
        if not (commit.finished and commit.confirmed and commit.match.get("ratings")):
            return
        if not any(e["type"] == "match_over" for e in commit.events):
            return
        changes = commit.match["ratings"]
        try:
            ratings_.apply(commit.game.name, changes, commit.match["id"])
        except Exception:  # the match has ended all the same: the archiver applies them
            log.warning("ratings of match %s not applied yet", commit.match["id"], exc_info=True)

    return after
