"""Players, apps and their tokens: durable in SQL, checked from Redis.

Ludothèque keeps no passwords. A *player* is a guest (made by a browser or
a phone, which keeps its token) or a user of an *app* that vouches for it
server to server, with the app's key and its own user id (``external_id``:
the same one is always the same player). Tables (SQLAlchemy Core, in the
archive's metadata; Alembic migrates them):

- ``apps``: an operator registers one (``ludotheque apps create``); its
  quotas (``limits``, JSON; unset ones take the defaults); its webhook
  (``ludotheque apps webhook``: ``webhook_url``, and ``webhook_secret``, the
  ``whsec_...`` that signs its calls, kept as is: the server signs with it,
  so it cannot be hashed; whoever reads the database can sign as the server);
- ``app_keys``: at most two keys per app (slots 1 and 2), so that one is
  rotated while the other works; stored hashed;
- ``players``: name (not unique), bot account or not, its app and
  ``external_id`` (unique together), or a guest's; a deleted player keeps
  its id, nothing else;
- ``player_tokens``: hashed, each with its expiry;
- ``match_players`` (``service.store.archive``, whose transaction writes
  it): who held which seat of an archived match: a player's finished
  matches, newest first.

**The request path never waits on the database.** Every valid token is
also in Redis (``ludotheque:{auth}:t:<sha256>``: what it is, whose, until
when: Redis expires it with the token), written when the token is made and
deleted when it is revoked, so a check is one Redis round trip; and a
process that checked a token keeps what it learnt for up to
``TokenCache.ttl_s`` (2 s), so that a player's requests cost what a seat
token's do. A revocation deletes the Redis copy and publishes the token's
hash (``REVOKED``); every process listens, forgets it and says so, and
the revocation answers once every listening process has (so a revoked
token is refused everywhere from then on); a process whose listener is not
connected keeps nothing, so a lost message cannot leave a revoked token
working past the TTL. A marker
(``ludotheque:{auth}:ready``) says the copy is whole: a token missing
while it is set is unknown, revoked or expired, with no database read;
when Redis has lost it (a new Redis, a flush), the next check rebuilds the
copy from the database, once, under a lock, and a check meanwhile reads
its one token from the database.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import sqlalchemy as sa

from service.domain import tokens as auth
from service.domain.hooks import new_secret
from service.domain.problems import Problem
from service.store.archive import DELETED_NAME, match_players, metadata
from service.store.database import retried_when_locked
from service.store.ratings import Ratings

log = logging.getLogger(__name__)

KEY_SLOTS = (1, 2)

apps = sa.Table(
    "apps",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(100), nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.Column("revoked_ms", sa.BigInteger, nullable=True),
    sa.Column("limits", sa.Text, nullable=False),  # JSON: {name: value}, unset: the defaults
    sa.Column("webhook_url", sa.String(2048), nullable=True),  # its players' events go there
    sa.Column("webhook_secret", sa.String(100), nullable=True),  # whsec_...: signs them
)

app_keys = sa.Table(
    "app_keys",
    metadata,
    sa.Column("hash", sa.String(64), primary_key=True),
    sa.Column(
        "app_id", sa.String(32), sa.ForeignKey("apps.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("slot", sa.SmallInteger, nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.UniqueConstraint("app_id", "slot", name="app_keys_slot"),
)

players = sa.Table(
    "players",
    metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("name", sa.String(64), nullable=False),
    sa.Column("bot", sa.Boolean, nullable=False),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.Column("app_id", sa.String(32), sa.ForeignKey("apps.id"), nullable=True),
    sa.Column("external_id", sa.String(200), nullable=True),
    sa.Column("deleted_ms", sa.BigInteger, nullable=True),
    sa.UniqueConstraint("app_id", "external_id", name="players_external"),
)

player_tokens = sa.Table(
    "player_tokens",
    metadata,
    sa.Column("hash", sa.String(64), primary_key=True),
    sa.Column(
        "player_id",
        sa.String(32),
        sa.ForeignKey("players.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("created_ms", sa.BigInteger, nullable=False),
    sa.Column("expires_ms", sa.BigInteger, nullable=False),
    sa.Index("player_tokens_player", "player_id"),
)

PREFIX = "ludotheque:{auth}"
READY = f"{PREFIX}:ready"
REBUILDING = f"{PREFIX}:rebuilding"
SECRET = f"{PREFIX}:identity-secret"  # keys identities: never delete it while matches live
MAX_TOKENS = 20  # live tokens per player: making one more ends its oldest
REVOKED = f"{PREFIX}:revoked"  # channel: a nonce, then the hashes of tokens just revoked
ACK_WAIT_S = 0.5  # how long a revocation waits for every process to confirm
HEARD_S = 3600.0  # a process remembers a revocation this long (a stream lives 10 minutes)


def ack_key(nonce: str) -> str:
    """Where each process that heard revocation ``nonce`` says so."""
    return f"{PREFIX}:ack:{nonce}"


def token_key(digest: str) -> str:
    return f"{PREFIX}:t:{digest}"


def limits_key(app_id: str) -> str:
    return f"{PREFIX}:a:{app_id}"


@dataclass(frozen=True)
class Credential:
    """What a player token or an app key stands for."""

    kind: str  # "player" or "app"
    id: str  # the player's id, or the app's
    app: str | None  # the app it counts against (a player's app; an app itself)
    digest: str  # the token's hash
    identity: str  # what the request's bearer becomes (Players.identity)
    expires_ms: int | None = None  # a player token's expiry


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id() -> str:
    return uuid.uuid4().hex


class Players:
    """Players, apps and tokens in the database ``engine`` points to, every
    valid token copied into Redis (``client``)."""

    def __init__(self, engine: sa.Engine, client: Any, token_ttl_s: int) -> None:
        self.engine = engine
        self.client = client
        self.token_ttl_ms = token_ttl_s * 1000
        self.secret: bytes | None = None

    def identity(self, kind: str, of: str) -> str:
        """What a token of ``kind`` for ``of`` stands for in a request
        (``service.domain.tokens``), keyed by the deployment's secret: a
        seat's stored holder cannot be forged from a public player id, even
        by a path that forgot to refuse a bearer starting with NUL."""
        if self.secret is None:
            self.client.set(SECRET, secrets.token_hex(32), nx=True)
            self.secret = self.client.get(SECRET)
        mac = hmac.new(self.secret, f"{kind}:{of}".encode(), hashlib.sha256).hexdigest()
        return f"{auth.IDENTITY}{kind}:{of}:{mac}"

    def holder(self, player_id: str) -> str:
        """What a seat held by ``player_id`` stores as its holder."""
        return auth.token_hash(self.identity("player", player_id))

    def _credential(self, found: dict[str, Any], digest: str) -> Credential:
        kind, of = found["k"], found["id"]
        identity = self.identity(kind, of)
        return Credential(kind, of, found.get("app"), digest, identity, found.get("x"))

    # -- checking a token (the request path) ---------------------------------------
    def resolve(self, token: str) -> Credential | None:
        """What ``token`` (an ``ldq_player_`` or ``ldq_app_`` one) stands for;
        None when it is unknown, revoked or expired. One Redis round trip."""
        return self.resolve_digest(auth.token_hash(token))

    def resolve_digest(self, digest: str) -> Credential | None:
        cached, ready = self.client.mget(token_key(digest), READY)
        if cached is not None:
            return self._credential(orjson.loads(cached), digest)
        if ready is not None:
            return None
        self.rebuild()
        found = self._from_database(digest)
        return None if found is None else self._credential(found, digest)

    def app_limits(self, app_id: str) -> dict[str, Any]:
        """The quotas set for ``app_id`` (only those set; {} for an unknown app)."""
        raw = self.client.get(limits_key(app_id))
        if raw is None:
            with self.engine.connect() as connection:
                text = connection.execute(
                    sa.select(apps.c.limits).where(
                        apps.c.id == app_id, apps.c.revoked_ms.is_(None)
                    )
                ).scalar()
            if text is None:
                return {}
            self.client.set(limits_key(app_id), text)
            raw = text
        return orjson.loads(raw)

    def _from_database(self, digest: str) -> dict[str, Any] | None:
        with self.engine.connect() as connection:
            return self._lookup(connection, digest)

    @staticmethod
    def _lookup(connection: sa.Connection, digest: str) -> dict[str, Any] | None:
        row = connection.execute(
            sa.select(player_tokens.c.player_id, player_tokens.c.expires_ms, players.c.app_id)
            .join(players, players.c.id == player_tokens.c.player_id)
            .where(player_tokens.c.hash == digest, player_tokens.c.expires_ms > now_ms())
        ).first()
        if row is not None:
            return {"k": "player", "id": row.player_id, "app": row.app_id, "x": row.expires_ms}
        row = connection.execute(
            sa.select(app_keys.c.app_id)
            .join(apps, apps.c.id == app_keys.c.app_id)
            .where(app_keys.c.hash == digest, apps.c.revoked_ms.is_(None))
        ).first()
        if row is not None:
            return {"k": "app", "id": row.app_id, "app": row.app_id, "x": None}
        return None

    def rebuild(self) -> None:
        """Copy every valid token into Redis, then mark the copy whole; one
        process at a time (the others read the database meanwhile)."""
        if not self.client.set(REBUILDING, "1", nx=True, ex=60):
            return
        try:
            with self.engine.connect() as connection:
                pipe = self.client.pipeline(transaction=False)
                for found, digest in self._every_token(connection):
                    self._cache(pipe, digest, found)
                    if len(pipe) >= 500:
                        pipe.execute()
                for row in connection.execute(sa.select(apps.c.id, apps.c.limits)):
                    pipe.set(limits_key(row.id), row.limits)
                pipe.set(READY, "1")
                pipe.execute()
            log.info("tokens copied into Redis from the database")
        finally:
            self.client.delete(REBUILDING)

    @staticmethod
    def _every_token(connection: sa.Connection) -> Iterator[tuple[dict[str, Any], str]]:
        rows = connection.execute(
            sa.select(player_tokens.c.hash, player_tokens.c.player_id, player_tokens.c.expires_ms)
            .add_columns(players.c.app_id)
            .join(players, players.c.id == player_tokens.c.player_id)
            .where(player_tokens.c.expires_ms > now_ms())
        )
        for row in rows:
            yield (
                {"k": "player", "id": row.player_id, "app": row.app_id, "x": row.expires_ms},
                row.hash,
            )
        keys = connection.execute(
            sa.select(app_keys.c.hash, app_keys.c.app_id)
            .join(apps, apps.c.id == app_keys.c.app_id)
            .where(apps.c.revoked_ms.is_(None))
        )
        for row in keys:
            yield {"k": "app", "id": row.app_id, "app": row.app_id, "x": None}, row.hash

    @staticmethod
    def _cache(pipe: Any, digest: str, found: dict[str, Any]) -> None:
        if found["x"] is None:
            pipe.set(token_key(digest), orjson.dumps(found))
        else:
            pipe.set(token_key(digest), orjson.dumps(found), pxat=found["x"])

    def _publish(self, digest: str, found: dict[str, Any]) -> None:
        """A new token, valid from now: in Redis too (and the copy marked
        whole if nothing was there: a new Redis has no other token to lose)."""
        pipe = self.client.pipeline(transaction=False)
        self._cache(pipe, digest, found)
        pipe.execute()
        if self.client.exists(READY) == 0:
            self.rebuild()

    def _forget(self, digests: list[str]) -> None:
        """End these tokens in Redis and in every process's cache: the call
        returns once every process listening has said it forgot them (or
        after ``ACK_WAIT_S``: a process that did not say so forgets them
        within its cache's TTL all the same)."""
        if not digests:
            return
        self.client.delete(*[token_key(d) for d in digests])
        nonce = uuid.uuid4().hex
        listeners = self.client.publish(REVOKED, " ".join([nonce, *digests]))
        deadline = time.monotonic() + ACK_WAIT_S
        heard = 0
        while heard < listeners and (left := deadline - time.monotonic()) > 0:
            if self.client.blpop([ack_key(nonce)], timeout=max(left, 0.01)) is None:
                break
            heard += 1
        if heard < listeners:
            log.warning("token revocation: %d of %d processes confirmed", heard, listeners)

    # -- players -------------------------------------------------------------------
    @retried_when_locked
    def create(
        self,
        name: str,
        bot: bool = False,
        app_id: str | None = None,
        external_id: str | None = None,
    ) -> tuple[dict[str, Any], str]:
        """A new player and its first token (shown once)."""
        row = {
            "id": new_id(),
            "name": name,
            "bot": bot,
            "created_ms": now_ms(),
            "app_id": app_id,
            "external_id": external_id,
        }
        with self.engine.begin() as connection:
            if app_id is not None:
                self._lock_app(connection, app_id)
            connection.execute(sa.insert(players).values(row))
            token, ended = self._new_token(connection, row["id"], app_id)
        self._forget(ended)
        return row, token

    def for_app(
        self, app_id: str, external_id: str, name: str, bot: bool
    ) -> tuple[dict[str, Any], str, bool]:
        """The app's player ``external_id`` (made now if new: then True),
        with a new token for one of its user's devices."""
        for _ in range(2):  # a concurrent first call may win the insert
            existing = self._by_external(app_id, external_id)
            if existing is not None:
                return existing, self.new_token(existing["id"]), False
            try:
                player, token = self.create(name, bot, app_id, external_id)
            except sa.exc.IntegrityError:
                continue
            return player, token, True
        raise Problem(409, "conflict", "the player was being created meanwhile: try again")

    def _by_external(self, app_id: str, external_id: str) -> dict[str, Any] | None:
        query = sa.select(players).where(
            players.c.app_id == app_id, players.c.external_id == external_id
        )
        with self.engine.connect() as connection:
            row = connection.execute(query).mappings().first()
        return None if row is None else dict(row)

    def get(self, player_id: str) -> dict[str, Any] | None:
        """A player that was not deleted, or None."""
        query = sa.select(players).where(players.c.id == player_id, players.c.deleted_ms.is_(None))
        with self.engine.connect() as connection:
            row = connection.execute(query).mappings().first()
        return None if row is None else dict(row)

    def profile(self, player_id: str) -> dict[str, Any] | None:
        """What anyone may see of a player: never its app, external id or tokens."""
        player = self.get(player_id)
        if player is None:
            return None
        counts = sa.select(match_players.c.game, sa.func.count()).where(
            match_players.c.player_id == player_id
        )
        with self.engine.connect() as connection:
            played = dict(connection.execute(counts.group_by(match_players.c.game)).all())
        return {
            "id": player["id"],
            "name": player["name"],
            "bot": player["bot"],
            "created_ms": player["created_ms"],
            "matches_played": played,
        }

    @retried_when_locked
    def new_token(self, player_id: str, asked_with: str | None = None) -> str:
        """A new token for the player (asked with its token ``asked_with``,
        which must still be valid); LookupError when the player, its app or
        that token has ended meanwhile."""
        with self.engine.begin() as connection:
            # the app's row before the player's, as everywhere (no deadlock)
            app_id = connection.execute(
                sa.select(players.c.app_id).where(players.c.id == player_id)
            ).scalar()
            if app_id is not None:
                self._lock_app(connection, app_id)
            if self._lock_player(connection, player_id) != app_id:
                raise LookupError(f"the player {player_id} left its app")
            if asked_with is not None:
                alive = sa.select(player_tokens.c.hash).where(
                    player_tokens.c.hash == asked_with,
                    player_tokens.c.player_id == player_id,
                    player_tokens.c.expires_ms > now_ms(),
                )
                if connection.execute(alive).first() is None:
                    raise LookupError("the token asking has ended")
            token, ended = self._new_token(connection, player_id, app_id)
        self._forget(ended)
        return token

    def _new_token(
        self, connection: sa.Connection, player_id: str, app_id: str | None
    ) -> tuple[str, list[str]]:
        """Make a token in the transaction of ``connection``, which holds the
        player's row: its Redis copy is written before the transaction
        commits, so that a revocation waiting for that row sees the token in
        the database and deletes its copy after. The player's tokens past
        ``MAX_TOKENS`` end (their hashes are returned, to forget)."""
        token = auth.new_token(auth.PLAYER)
        digest = auth.token_hash(token)
        created = now_ms()
        expires = created + self.token_ttl_ms
        connection.execute(
            sa.insert(player_tokens).values(
                hash=digest, player_id=player_id, created_ms=created, expires_ms=expires
            )
        )
        oldest = list(
            connection.execute(
                sa.select(player_tokens.c.hash)
                .where(player_tokens.c.player_id == player_id)
                .order_by(player_tokens.c.created_ms.desc(), player_tokens.c.hash)
                .offset(MAX_TOKENS)
            ).scalars()
        )
        if oldest:
            connection.execute(sa.delete(player_tokens).where(player_tokens.c.hash.in_(oldest)))
        self._publish(digest, {"k": "player", "id": player_id, "app": app_id, "x": expires})
        return token, oldest

    @staticmethod
    def _lock_player(connection: sa.Connection, player_id: str) -> str | None:
        """Hold the player's row until the transaction ends (a write to it:
        a row lock on PostgreSQL, the write lock on SQLite), so that its
        tokens change one transaction at a time; its app. LookupError for a
        player deleted or unknown."""
        held = connection.execute(
            sa.update(players)
            .where(players.c.id == player_id, players.c.deleted_ms.is_(None))
            .values(name=players.c.name)
            .returning(players.c.app_id)
        ).first()
        if held is None:
            raise LookupError(f"no player {player_id}")
        return held.app_id

    @staticmethod
    def _lock_app(connection: sa.Connection, app_id: str) -> None:
        """Hold the app's row likewise; LookupError for a revoked app."""
        held = connection.execute(
            sa.update(apps)
            .where(apps.c.id == app_id, apps.c.revoked_ms.is_(None))
            .values(name=apps.c.name)
        )
        if held.rowcount == 0:
            raise LookupError(f"no app {app_id}")

    def token_expiry(self, digest: str) -> int | None:
        query = sa.select(player_tokens.c.expires_ms).where(player_tokens.c.hash == digest)
        with self.engine.connect() as connection:
            return connection.execute(query).scalar()

    @retried_when_locked
    def revoke(self, player_id: str, digest: str | None = None) -> int:
        """End one of the player's tokens (``digest``), or all of them; how many ended."""
        condition = player_tokens.c.player_id == player_id
        if digest is not None:
            condition &= player_tokens.c.hash == digest
        with self.engine.begin() as connection:
            try:
                self._lock_player(connection, player_id)  # no token is made meanwhile
            except LookupError:
                return 0
            digests = list(
                connection.execute(sa.select(player_tokens.c.hash).where(condition)).scalars()
            )
            connection.execute(sa.delete(player_tokens).where(condition))
        self._forget(digests)
        return len(digests)

    @retried_when_locked
    def delete(self, player_id: str) -> None:
        """Forget the player: its tokens end, its name becomes "deleted
        player", its app and external id are dropped (its id stays, so that
        archived matches still say a player sat there)."""
        with self.engine.begin() as connection:
            # first: the row is held from here on, so no token is made meanwhile
            connection.execute(
                sa.update(players)
                .where(players.c.id == player_id)
                .values(name=DELETED_NAME, app_id=None, external_id=None, deleted_ms=now_ms())
            )
            digests = list(
                connection.execute(
                    sa.select(player_tokens.c.hash).where(player_tokens.c.player_id == player_id)
                ).scalars()
            )
            connection.execute(
                sa.delete(player_tokens).where(player_tokens.c.player_id == player_id)
            )
        self._forget(digests)
        Ratings.forget_player_in(self.client, player_id)  # off every leaderboard, for good

    # -- apps (the operator's) -----------------------------------------------------
    @retried_when_locked
    def create_app(self, name: str, limits: dict[str, Any] | None = None) -> tuple[str, str]:
        """A new app and its first key (slot 1), shown once."""
        app_id = new_id()
        text = orjson.dumps(limits or {}).decode()
        with self.engine.begin() as connection:
            connection.execute(
                sa.insert(apps).values(id=app_id, name=name, created_ms=now_ms(), limits=text)
            )
        self.client.set(limits_key(app_id), text)
        return app_id, self.new_key(app_id, 1)

    @retried_when_locked
    def new_key(self, app_id: str, slot: int) -> str:
        """A new key in ``slot`` of the app, replacing the one there (the
        other slot's keeps working): rotation without a gap."""
        if slot not in KEY_SLOTS:
            raise ValueError(f"an app has key slots {KEY_SLOTS}")
        key = auth.new_token(auth.APP)
        with self.engine.begin() as connection:
            if not self._app_exists(connection, app_id):
                raise LookupError(f"no app {app_id}")
            old = self._keys(connection, app_id, slot)
            connection.execute(
                sa.delete(app_keys).where(app_keys.c.app_id == app_id, app_keys.c.slot == slot)
            )
            connection.execute(
                sa.insert(app_keys).values(
                    hash=auth.token_hash(key), app_id=app_id, slot=slot, created_ms=now_ms()
                )
            )
        self._forget(old)
        self._publish(auth.token_hash(key), {"k": "app", "id": app_id, "app": app_id, "x": None})
        return key

    @retried_when_locked
    def revoke_app(self, app_id: str, slot: int | None = None) -> None:
        """End one key of the app, or (no ``slot``) the app itself: both keys,
        and every token of its players."""
        with self.engine.begin() as connection:
            self._lock_app(connection, app_id)  # no player nor token of it is made meanwhile
            digests = self._keys(connection, app_id, slot)
            condition = app_keys.c.app_id == app_id
            if slot is not None:
                condition &= app_keys.c.slot == slot
            connection.execute(sa.delete(app_keys).where(condition))
            if slot is None:
                of_app = sa.select(players.c.id).where(players.c.app_id == app_id)
                tokens = player_tokens.c.player_id.in_(of_app)
                digests += list(
                    connection.execute(sa.select(player_tokens.c.hash).where(tokens)).scalars()
                )
                connection.execute(sa.delete(player_tokens).where(tokens))
                connection.execute(
                    sa.update(apps).where(apps.c.id == app_id).values(revoked_ms=now_ms())
                )
        self._forget(digests)
        if slot is None:
            self.client.delete(limits_key(app_id))

    @retried_when_locked
    def set_limits(self, app_id: str, limits: dict[str, Any]) -> dict[str, Any]:
        """Set some of the app's quotas (None: back to the default)."""
        with self.engine.begin() as connection:
            text = connection.execute(sa.select(apps.c.limits).where(apps.c.id == app_id)).scalar()
            if text is None:
                raise LookupError(f"no app {app_id}")
            merged = orjson.loads(text) | limits
            merged = {k: v for k, v in merged.items() if v is not None}
            text = orjson.dumps(merged).decode()
            connection.execute(sa.update(apps).where(apps.c.id == app_id).values(limits=text))
        self.client.set(limits_key(app_id), text)
        return merged

    @retried_when_locked
    def set_webhook(self, app_id: str, url: str | None) -> str | None:
        """Send the app's players' events to ``url`` (None: no more): its
        new signing secret (``whsec_...``), to show once."""
        secret = None if url is None else new_secret()
        with self.engine.begin() as connection:
            if not self._app_exists(connection, app_id):
                raise LookupError(f"no app {app_id}")
            connection.execute(
                sa.update(apps)
                .where(apps.c.id == app_id)
                .values(webhook_url=url, webhook_secret=secret)
            )
        return secret

    def webhook_of(self, player_id: str) -> tuple[str, str, str] | None:
        """The webhook of the player's app (app id, URL, secret), if it has one."""
        query = (
            sa.select(apps.c.id, apps.c.webhook_url, apps.c.webhook_secret)
            .join(players, players.c.app_id == apps.c.id)
            .where(
                players.c.id == player_id,
                apps.c.webhook_url.is_not(None),
                apps.c.revoked_ms.is_(None),
            )
        )
        with self.engine.connect() as connection:
            found = connection.execute(query).first()
        return None if found is None else (found[0], found[1], found[2])

    def list_apps(self) -> list[dict[str, Any]]:
        query = sa.select(
            apps.c.id,
            apps.c.name,
            apps.c.created_ms,
            apps.c.revoked_ms,
            apps.c.limits,
            apps.c.webhook_url,
        )
        with self.engine.connect() as connection:
            found = [
                dict(row)
                for row in connection.execute(query.order_by(apps.c.created_ms)).mappings()
            ]
            slots = connection.execute(sa.select(app_keys.c.app_id, app_keys.c.slot)).all()
        for app in found:
            app["limits"] = orjson.loads(app["limits"])
            app["key_slots"] = sorted(s for a, s in slots if a == app["id"])
        return found

    def owns(self, app_id: str, player_id: str) -> bool:
        query = sa.select(players.c.id).where(
            players.c.id == player_id, players.c.app_id == app_id, players.c.deleted_ms.is_(None)
        )
        with self.engine.connect() as connection:
            return connection.execute(query).first() is not None

    @staticmethod
    def _app_exists(connection: sa.Connection, app_id: str) -> bool:
        query = sa.select(apps.c.id).where(apps.c.id == app_id, apps.c.revoked_ms.is_(None))
        return connection.execute(query).first() is not None

    @staticmethod
    def _keys(connection: sa.Connection, app_id: str, slot: int | None) -> list[str]:
        condition = app_keys.c.app_id == app_id
        if slot is not None:
            condition &= app_keys.c.slot == slot
        return list(connection.execute(sa.select(app_keys.c.hash).where(condition)).scalars())


class TokenCache:
    """The tokens this process has checked, each for up to ``ttl_s``, kept
    only while a listener hears every revocation (``REVOKED``)."""

    def __init__(self, players: Players, ttl_s: float = 2.0, size: int = 50_000) -> None:
        self.players = players
        self.ttl_s = ttl_s
        self.size = size
        self.kept: dict[str, tuple[Credential, float]] = {}
        # bumped by every revocation heard: a check that read Redis before one
        # keeps nothing it read (the token may be among those revoked)
        self.revocations = 0
        self.heard: dict[str, float] = {}  # tokens revoked lately: followers they opened end
        self.listening = False  # True while subscribed: only then is a kept token trusted
        self.started = False
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def resolve(self, token: str) -> Credential | None:
        digest = auth.token_hash(token)
        now = time.monotonic()
        kept = self.kept.get(digest)
        if kept is not None and self.listening and now - kept[1] < self.ttl_s:
            found = kept[0]
            if found.expires_ms is None or found.expires_ms > time.time() * 1000:
                return found
        if not self.started:
            self._start()
        before = self.revocations
        found = self.players.resolve_digest(digest)
        if found is not None and self.listening and self.revocations == before:
            if len(self.kept) >= self.size:
                self.kept.clear()
            self.kept[digest] = (found, now)
        return found

    def revoked(self, digest: str) -> bool:
        """Whether this process heard that the token ``digest`` was revoked
        (lately: within ``HEARD_S``, longer than any follower lives)."""
        return digest in self.heard

    def _heard(self, digests: list[str]) -> None:
        now = time.monotonic()
        if len(self.heard) > 100_000:
            self.heard = {d: t for d, t in self.heard.items() if now - t < HEARD_S}
        for digest in digests:
            self.heard[digest] = now

    def _confirm(self, nonce: str) -> None:
        pipe = self.players.client.pipeline(transaction=False)
        pipe.rpush(ack_key(nonce), 1)
        pipe.expire(ack_key(nonce), 10)
        pipe.execute()

    def _start(self) -> None:
        with self.lock:
            if not self.started:
                self.started = True
                threading.Thread(
                    target=self._listen, name="ludotheque-tokens", daemon=True
                ).start()

    def stop(self) -> None:
        """Stop listening, within a second (the app is stopped: its Redis
        may be gone, and a loss is no news then)."""
        self.stopping.set()

    def _listen(self) -> None:
        failures = 0  # in a row: the first is a warning, the next ones are not news
        while not self.stopping.is_set():
            pubsub = None
            try:
                pubsub = self.players.client.pubsub()
                pubsub.subscribe(REVOKED)
                # (a blocking read would time out with the client's sockets)
                while not self.stopping.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message is None:
                        continue
                    if message["type"] == "subscribe":
                        self.kept.clear()  # what was missed while not listening is gone
                        self.listening = True
                        failures = 0
                    elif message["type"] == "message":
                        nonce, *digests = message["data"].decode().split()
                        self.revocations += 1
                        self._heard(digests)
                        for digest in digests:
                            self.kept.pop(digest, None)
                        self._confirm(nonce)
            except Exception:  # a lost connection: trust nothing kept until listening again
                if self.stopping.is_set():
                    return
                failures += 1
                log.log(
                    logging.WARNING if failures == 1 else logging.DEBUG,
                    "token revocations: listener lost; reconnecting",
                    exc_info=True,
                )
            finally:
                self.listening = False
                self.revocations += 1
                self.kept.clear()
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        pubsub.close()
            self.stopping.wait(0.5)
