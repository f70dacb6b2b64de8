"""Alembic's environment: the archive's metadata, one connection, one
transaction per migration run (``service.store.database.migrate``)."""

from __future__ import annotations

from alembic import context

from service.store import players, ratings  # noqa: F401  (their tables join the metadata)
from service.store.archive import metadata
from service.store.database import engine_for


def run_migrations_online() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None
    engine = engine_for(url)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            # SQLite alters a table by copying it
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations (--sql) are not supported: run `ludotheque migrate`")
run_migrations_online()
