"""service.domain.records without a server: a finished match's signed record
built once per process while it stays in the cache, bounded in bytes."""

from __future__ import annotations

import orjson

from engines import GAMES
from service.domain import signing
from service.domain.records import Records
from tests.domain.test_replays import record_of

GAME = GAMES["pacal"]


def test_a_record_is_built_and_signed_once_while_it_stays_in_the_cache():
    """Finding 3: a long match's record was built from its whole log at
    every ask."""
    key = signing.from_pem(signing.new_pem())
    built: list[str] = []

    def record(game, match_id):
        built.append(match_id)
        return record_of(match_id, 1)

    records = Records(record, lambda: key)
    first = records.encoded(GAME, "a")
    assert signing.check(orjson.loads(first), key.public) is None
    assert records.encoded(GAME, "a") is first and built == ["a"]
    # another key signs it again, in its own name
    other = signing.from_pem(signing.new_pem())
    records.key = lambda: other
    assert orjson.loads(records.encoded(GAME, "a"))["signature"]["key_id"] == other.key_id
    assert built == ["a", "a"]


def test_a_record_larger_than_the_whole_cache_is_served_not_kept():
    key = signing.from_pem(signing.new_pem())
    records = Records(lambda game, match_id: record_of(match_id, 1), lambda: key, budget=100)
    assert orjson.loads(records.encoded(GAME, "a"))["id"] == "a"
    assert not records.kept.kept and records.kept.size == 0
