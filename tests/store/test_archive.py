"""The archive (service/store/archive.py) on SQLite and on PostgreSQL: a
finished match is kept once by id, its record never changes, its final
answer only for a newer version; a search row per bot kind."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator

import orjson
import pytest
import sqlalchemy as sa

from service.store.archive import Archive, Archived, match_bots, matches
from service.store.database import engine_for


@pytest.fixture
def engine(migrated_database_url: str) -> Iterator[sa.Engine]:
    engine = engine_for(migrated_database_url)
    yield engine
    # before the database is dropped
    engine.dispose()


@pytest.fixture
def archive(engine: sa.Engine) -> Archive:
    return Archive(engine)


def finished(match_id: str = "m1", **changes: object) -> Archived:
    """A finished match of two bots of one kind and a person."""
    archived = Archived(
        id=match_id,
        game="tictactoe",
        created_ms=1_000,
        ended_ms=2_000,
        archived_ms=3_000,
        version=7,
        seeded=False,
        seats=[
            {"seat": 0, "name": "Ada", "bot": None},
            {"seat": 1, "name": "Random 1", "bot": "random"},
            {"seat": 2, "name": "Random 2", "bot": "random"},
        ],
        outcome={"winners": [0], "seed": "abc", "salt": "def"},
        final={"id": match_id, "version": 7, "status": "finished"},
        record={"id": match_id, "moves": [4, 0, 8], "signature": "sig-7"},
    )
    return dataclasses.replace(archived, **changes)


def count(engine: sa.Engine, table: sa.Table) -> int:
    with engine.connect() as connection:
        return connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()


def test_a_match_is_archived_once_by_id(archive: Archive, engine: sa.Engine) -> None:
    assert archive.put(finished()) is True
    assert archive.put(finished()) is False

    assert count(engine, matches) == 1


def test_an_archived_match_reads_back(archive: Archive) -> None:
    archived = finished()
    archive.put(archived)

    row = archive.get("m1")
    assert row is not None
    assert (row.id, row.game) == ("m1", "tictactoe")
    assert orjson.loads(row.final) == archived.final
    assert archive.final("tictactoe", "m1") == archived.final
    assert archive.record("tictactoe", "m1") == archived.record
    assert archive.has("m1")


def test_a_match_is_read_only_under_its_own_game(archive: Archive) -> None:
    archive.put(finished())

    assert archive.final("nim", "m1") is None
    assert archive.record("nim", "m1") is None


def test_an_unknown_match_is_not_there(archive: Archive) -> None:
    assert archive.get("nope") is None
    assert archive.final("tictactoe", "nope") is None
    assert archive.record("tictactoe", "nope") is None
    assert not archive.has("nope")


def test_a_newer_version_replaces_the_final_answer_never_the_record(archive: Archive) -> None:
    first = finished()
    archive.put(first)
    newer_final = {"id": "m1", "version": 8, "status": "finished", "rematch": "offered"}
    later = finished(version=8, archived_ms=4_000, final=newer_final, record={"forged": True})

    assert archive.put(later) is False

    assert archive.final("tictactoe", "m1") == newer_final
    assert archive.record("tictactoe", "m1") == first.record


def test_an_older_version_changes_nothing(archive: Archive) -> None:
    first = finished()
    archive.put(first)
    older = finished(version=6, archived_ms=4_000, final={"stale": True}, record={"stale": True})

    assert archive.put(older) is False

    assert archive.final("tictactoe", "m1") == first.final
    assert archive.record("tictactoe", "m1") == first.record


def test_a_newer_version_in_the_same_millisecond_is_not_new(archive: Archive) -> None:
    archive.put(finished())

    assert archive.put(finished(version=8, final={"rematch": "offered"})) is False


def test_one_search_row_per_bot_kind(archive: Archive, engine: sa.Engine) -> None:
    archive.put(finished())
    archive.put(finished("m2", seats=[{"seat": 0, "name": "Ada", "bot": None}]))

    with engine.connect() as connection:
        rows = connection.execute(sa.select(match_bots)).mappings().all()
    assert [dict(row) for row in rows] == [
        {"match_id": "m1", "bot": "random", "game": "tictactoe", "ended_ms": 2_000}
    ]


def test_two_archivers_at_once_keep_one_row_and_one_is_told_new(
    archive: Archive, engine: sa.Engine
) -> None:
    # many rounds, each thread on its own pooled connection, so that the two
    # inserts of a round do meet inside the database at least sometimes
    rounds = [finished(f"m{number}") for number in range(20)]
    both = threading.Barrier(2)
    answers: dict[str, list[bool]] = {archived.id: [] for archived in rounds}

    def archiver() -> None:
        for archived in rounds:
            both.wait(timeout=10)
            answers[archived.id].append(archive.put(archived))

    threads = [threading.Thread(target=archiver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert all(sorted(told) == [False, True] for told in answers.values()), answers
    assert count(engine, matches) == len(rounds)
    assert count(engine, match_bots) == len(rounds)
