"""The archive's migrations (service/store/migrations), from an empty
database, on SQLite and on PostgreSQL: they reach the code's revision, build
exactly the schema the code declares, and undo it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from service.store.archive import metadata
from service.store.database import (
    NotMigrated,
    check_migrated,
    current,
    downgrade,
    engine_for,
    head,
    migrate,
)


@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    engine = engine_for(database_url)
    yield engine
    # before the database is dropped
    engine.dispose()


def tables(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def differences(engine: sa.Engine) -> list:
    with engine.connect() as connection:
        return compare_metadata(MigrationContext.configure(connection), metadata)


def test_migrating_an_empty_database_reaches_head(database_url: str, engine: sa.Engine) -> None:
    migrate(database_url)

    assert current(engine) == head()
    check_migrated(engine)


def test_the_migrated_schema_is_the_one_the_code_declares(
    database_url: str, engine: sa.Engine
) -> None:
    migrate(database_url)

    assert differences(engine) == []
    assert tables(engine) == {*metadata.tables, "alembic_version"}


def test_downgrading_to_base_leaves_only_alembics_table(
    database_url: str, engine: sa.Engine
) -> None:
    migrate(database_url)

    downgrade(database_url)

    assert tables(engine) == {"alembic_version"}
    assert current(engine) is None


def test_upgrading_again_after_a_downgrade(database_url: str, engine: sa.Engine) -> None:
    migrate(database_url)
    downgrade(database_url)

    migrate(database_url)

    assert current(engine) == head()
    assert differences(engine) == []


def test_migrating_twice_is_harmless(database_url: str, engine: sa.Engine) -> None:
    migrate(database_url)

    migrate(database_url)

    check_migrated(engine)
    assert differences(engine) == []


def test_an_empty_database_is_not_migrated(engine: sa.Engine) -> None:
    with pytest.raises(NotMigrated, match="run `ludotheque migrate`") as refused:
        check_migrated(engine)

    assert "none (empty)" in str(refused.value)
    assert tables(engine) == set()
