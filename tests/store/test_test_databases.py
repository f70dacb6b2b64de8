"""How the tests find a PostgreSQL server (tests/support/databases.py): with
none answering they start their own, and without PostgreSQL at all they
skip naming the install command, or fail where it is required (CI)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from service.store.database import check_migrated, engine_for, migrate
from tests.support import databases

# where no server listens: the machine's server is out of reach
CLOSED = "postgresql://postgres@127.0.0.1:1/postgres"


@pytest.fixture
def no_machine_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LUDOTHEQUE_TEST_POSTGRES_URL", raising=False)
    monkeypatch.setenv("LUDOTHEQUE_TEST_POSTGRES_PROBE", CLOSED)


@pytest.mark.usefixtures("no_machine_server")
def test_with_no_server_answering_the_tests_start_their_own() -> None:
    with databases.postgres_server() as admin_url:
        assert sa.make_url(admin_url).port != 5432
        with databases.fresh_database(admin_url) as url:
            migrate(url)
            engine = engine_for(url)
            check_migrated(engine)
            engine.dispose()

    assert not databases.answers(admin_url, timeout_s=1)


@pytest.mark.usefixtures("no_machine_server")
def test_without_postgresql_the_tests_skip_naming_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(databases, "BINARIES", "/nowhere/*/bin")
    monkeypatch.delenv("LUDOTHEQUE_REQUIRE_POSTGRES", raising=False)

    with (
        pytest.raises(pytest.skip.Exception, match="apt-get install -y postgresql"),
        databases.postgres_server(),
    ):
        pass


@pytest.mark.usefixtures("no_machine_server")
def test_without_postgresql_the_tests_fail_where_it_is_required(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(databases, "BINARIES", "/nowhere/*/bin")
    monkeypatch.setenv("LUDOTHEQUE_REQUIRE_POSTGRES", "1")

    with (
        pytest.raises(pytest.fail.Exception, match="LUDOTHEQUE_REQUIRE_POSTGRES=1"),
        databases.postgres_server(),
    ):
        pass


def test_a_closed_port_does_not_answer() -> None:
    assert not databases.answers(CLOSED)
