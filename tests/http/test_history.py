"""Finished matches from the archive, over HTTP (issue 35, points 3 and 4):
``GET /v1/matches`` (search, page by page) and ``GET /v1/matches/export``
(NDJSON of signed records), and ``ludotheque export``; on SQLite and on
PostgreSQL."""

from __future__ import annotations

import datetime
import itertools
import random
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
import requests
from click.testing import CliRunner

from service.cli import main
from service.domain.signing import check, from_pem, new_pem, parse_public_key, sign
from service.store.archive import Archive, Archived, match_bots, matches
from service.store.searches import decode_cursor, encode_cursor
from tests.support.client import ApiClient
from tests.support.matches import create_match, play_out
from tests.support.problems import assert_problem
from tests.support.servers import LiveServer

GAMES = ["dekal", "pacal", "gaudi", "ducale"]
BOTS = ["random", "greedy", "mcts"]
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@pytest.fixture(scope="module")
def server(redis_url: str, module_db_url: str) -> Iterator[LiveServer]:
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}) as live:
        yield live


@pytest.fixture
def archive(server: LiveServer) -> Archive:
    """The server's archive, emptied."""
    found = server.app.extensions["ludotheque.archive"]
    with found.engine.begin() as connection:
        connection.execute(match_bots.delete())
        connection.execute(matches.delete())
    return found


@pytest.fixture(scope="module")
def record_key(server: LiveServer) -> Any:
    return server.app.extensions["ludotheque.record_keys"].get()


@pytest.fixture(scope="module")
def public_key(server: LiveServer) -> str:
    published = server.http.get(server.url("/v1/record-key")).json()
    return published["public_key"]


def archived(
    n: int,
    ended_ms: int,
    key: Any,
    game: str = "dekal",
    bots: tuple[str, ...] = (),
    seeded: bool = False,
) -> Archived:
    """A finished match as the archiver keeps it; its record is signed (the
    replay of a made-up match would not verify, its signature does)."""
    match_id = f"{n:032x}"
    seats = [{"seat": 0, "name": "Ada", "bot": None}] + [
        {"seat": i + 1, "name": None, "bot": bot} for i, bot in enumerate(bots)
    ]
    outcome = {"winners": [0], "seeded": seeded, "seed": n, "salt": "00" * 32}
    record = sign({"format": "ludotheque-record/1", "id": match_id, "game": game}, key)
    return Archived(
        id=match_id,
        game=game,
        created_ms=ended_ms - 60_000,
        ended_ms=ended_ms,
        archived_ms=ended_ms + 5,
        version=10,
        seeded=seeded,
        seats=seats,
        outcome=outcome,
        final={"id": match_id, "status": "finished"},
        record=record,
    )


def newest_first(found: list[Archived]) -> list[Archived]:
    return sorted(found, key=lambda a: (a.ended_ms, a.id), reverse=True)


def rfc3339(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)
    return moment.isoformat().replace("+00:00", "Z")


@pytest.fixture
def varied(archive: Archive, record_key: Any) -> list[Archived]:
    """160 matches: every game, bot kinds alone, together or none, ends
    spread over an hour with ties."""
    rng = random.Random(35)
    made = []
    for n in range(160):
        kinds = tuple(rng.sample(BOTS, rng.choice([0, 1, 1, 2])))
        ended = T0 + rng.randrange(0, 3_600_000, 60_000)  # a minute apart at most: ties
        made.append(archived(n + 1, ended, record_key, GAMES[n % 4], kinds, seeded=n % 7 == 0))
    for match in made:
        assert archive.put(match)
    return made


def listed(server: LiveServer, **query: Any) -> list[dict[str, Any]]:
    """Every match of a search, following `next` to the end."""
    found: list[dict[str, Any]] = []
    cursor = None
    for _ in range(1000):
        params = {**query, **({"cursor": cursor} if cursor else {})}
        answer = server.http.get(server.url("/v1/matches"), params=params)
        assert answer.status_code == 200, answer.text
        page = answer.json()
        found += page["matches"]
        cursor = page["next"]
        if cursor is None:
            return found
    raise AssertionError("no end")


def fits(match: Archived, game=None, bot=None, since=None, until=None) -> bool:
    return (
        (game is None or match.game == game)
        and (bot is None or bot in match.bots())
        and (since is None or match.ended_ms >= since)
        and (until is None or match.ended_ms < until)
    )


def test_newest_first_with_ties_broken_by_id(server, archive, record_key):
    made = [archived(n, T0 + 1000 * (n % 3), record_key) for n in range(1, 13)]
    for match in random.Random(1).sample(made, len(made)):
        archive.put(match)
    answer = server.http.get(server.url("/v1/matches"))
    assert answer.status_code == 200
    assert answer.headers["Cache-Control"] == "public, max-age=5"
    ids = [m["id"] for m in answer.json()["matches"]]
    assert ids == [m.id for m in newest_first(made)]
    assert answer.json()["next"] is None


def test_an_entry_shows_what_a_spectator_saw_and_links_to_the_match(server, archive, record_key):
    match = archived(7, T0 + 1234, record_key, "pacal", ("mcts",), seeded=True)
    archive.put(match)
    (entry,) = server.http.get(server.url("/v1/matches")).json()["matches"]
    path = f"/v1/games/pacal/matches/{match.id}"
    assert entry == {
        "id": match.id,
        "game": "pacal",
        "created_at": "2025-12-31T23:59:01.234Z",
        "ended_at": "2026-01-01T00:00:01.234Z",
        "seats": [
            {"seat": 0, "name": "Ada", "bot": None},
            {"seat": 1, "name": None, "bot": "mcts"},
        ],
        "outcome": match.outcome,
        "seeded": True,
        "links": {"match": path, "record": f"{path}/record", "replay": f"{path}/replay"},
    }


def test_a_seat_stored_with_more_than_a_spectator_sees_is_listed_without_it(
    server, archive, record_key
):
    match = archived(8, T0, record_key)
    match.seats[0]["token"] = "ldq_seat_secret"
    archive.put(match)
    text = server.http.get(server.url("/v1/matches")).text
    assert "ldq_seat_secret" not in text and "token" not in text


SINCE, UNTIL = T0 + 600_000, T0 + 2_400_000


@pytest.mark.parametrize(
    ("game", "bot", "window"),
    [
        *itertools.product([None, "gaudi"], [None, "greedy"], [False, True]),
        ("dekal", "mcts", True),
        (None, "random", False),
        ("ducale", None, True),
    ],
)
def test_every_filter_and_combination_lists_exactly_its_matches(server, varied, game, bot, window):
    query: dict[str, Any] = {"limit": 7}
    if game:
        query["game"] = game
    if bot:
        query["bot"] = bot
    since = until = None
    if window:
        since, until = SINCE, UNTIL
        query |= {"since": rfc3339(SINCE), "until": rfc3339(UNTIL)}
    expected = [m.id for m in newest_first(varied) if fits(m, game, bot, since, until)]
    assert expected  # the data cover every case
    assert [m["id"] for m in listed(server, **query)] == expected


def test_since_is_inclusive_and_until_exclusive_to_the_millisecond(server, archive, record_key):
    for n, ended in enumerate([T0 - 1, T0, T0 + 1, T0 + 999, T0 + 1000], start=1):
        archive.put(archived(n, ended, record_key))
    ids = lambda **q: [int(m["id"], 16) for m in listed(server, **q)]  # noqa: E731
    assert ids(since="2026-01-01T00:00:00Z", until="2026-01-01T00:00:01Z") == [4, 3, 2]
    # sub-millisecond times: since 0.0005 s starts after T0; until 0.9995 s keeps T0 + 999
    assert ids(since="2026-01-01T00:00:00.0005Z", until="2026-01-01T00:00:00.9995Z") == [4, 3]
    assert ids(since="2026-01-01T01:00:00+01:00", until="2026-01-01T00:00:00.001Z") == [2]


def test_pages_chain_to_the_end_without_repeats_or_gaps_while_matches_end(
    server, varied, archive, record_key
):
    expected = [m.id for m in newest_first(varied)]
    seen: list[str] = []
    cursor = None
    newer = itertools.count(1000)
    while True:
        params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
        page = server.http.get(server.url("/v1/matches"), params=params).json()
        seen += [m["id"] for m in page["matches"]]
        # matches end meanwhile, newer than every page shown, some tied at the newest end
        for _ in range(2):
            archive.put(archived(next(newer), T0 + 3_600_000, record_key, "gaudi", ("random",)))
        cursor = page["next"]
        if cursor is None:
            break
        assert decode_cursor(cursor) == (
            next(m.ended_ms for m in varied if m.id == seen[-1]),
            seen[-1],
        )
    assert seen == expected


@pytest.mark.parametrize(
    "query",
    [
        {"cursor": "abc"},
        {"cursor": "!!!!"},
        {"cursor": encode_cursor(1, "x") + "="},
        {"cursor": "bm90IGEgY3Vyc29y"},  # base64 of "not a cursor"
        {"cursor": "MTIzOg"},  # "123:" (no id)
        {"cursor": "x" * 500},
        {"cursor": "LTE6YWJj"},  # "-1:abc"
        {"since": "yesterday"},
        {"since": "2026-01-01T00:00:00"},  # no offset
        {"until": "2026-13-01T00:00:00Z"},
        {"limit": 0},
        {"limit": 101},
        {"limit": "ten"},
        {"game": "chess"},
        {"bot": "Bad Bot"},
    ],
)
def test_a_malformed_argument_is_a_422_problem(server, archive, query):
    answer = server.http.get(server.url("/v1/matches"), params=query)
    body = assert_problem(answer, 422, "invalid_request")
    assert set(body["errors"]) == set(query)


@pytest.mark.parametrize("query", [{"limit": 0}, {"limit": 1_000_001}, {"since": "now"}])
def test_a_malformed_export_argument_is_a_422_problem(server, archive, query):
    answer = server.http.get(server.url("/v1/matches/export"), params=query)
    assert_problem(answer, 422, "invalid_request")


def exported(server: LiveServer, **query: Any) -> bytes:
    answer = server.http.get(server.url("/v1/matches/export"), params=query)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == "application/x-ndjson"
    assert answer.headers["Cache-Control"] == "no-store"
    return answer.content


@pytest.mark.parametrize(
    "query",
    [
        {},
        {"game": "pacal"},
        {"bot": "mcts", "limit": 5},
        {"game": "dekal", "bot": "greedy"},
        {"since": rfc3339(SINCE), "until": rfc3339(UNTIL), "bot": "random"},
    ],
)
def test_the_export_is_exactly_the_filtered_signed_records_newest_first(
    server, varied, public_key, query
):
    body = exported(server, **query)
    window = {"since": SINCE, "until": UNTIL} if "since" in query else {}
    expected = [
        m for m in newest_first(varied) if fits(m, query.get("game"), query.get("bot"), **window)
    ][: query.get("limit")]
    assert body == b"".join(orjson.dumps(m.record) + b"\n" for m in expected)
    lines = body.splitlines()
    assert len(lines) == len(expected) > 0
    for line in lines:
        record = orjson.loads(line)
        assert check(record, parse_public_key(public_key)) is None


def test_an_empty_export_is_an_empty_answer(server, archive):
    assert exported(server) == b""


def test_the_export_pages_through_more_records_than_a_batch(server, archive, record_key):
    made = [archived(n, T0 + n // 2, record_key, bots=("random",)) for n in range(1, 1202)]
    with archive.engine.begin() as connection:  # faster than one put each
        connection.execute(matches.insert(), [m.row() for m in made])
        connection.execute(
            match_bots.insert(),
            [
                {"match_id": m.id, "bot": "random", "game": "dekal", "ended_ms": m.ended_ms}
                for m in made
            ],
        )
    body = exported(server, bot="random")
    assert body == b"".join(orjson.dumps(m.record) + b"\n" for m in newest_first(made))


def run_cli(args: list[str]) -> Any:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize(
    "query", [{}, {"game": "gaudi", "bot": "greedy"}, {"since": rfc3339(SINCE), "limit": 9}]
)
def test_the_cli_export_equals_the_http_export(server, varied, module_db_url, tmp_path, query):
    args = ["export", "--database-url", module_db_url]
    for name, value in query.items():
        args += [f"--{name}", str(value)]
    by_http = exported(server, **query)
    assert run_cli(args).stdout_bytes == by_http
    run_cli([*args, "--output", str(tmp_path / "out.ndjson")])
    assert (tmp_path / "out.ndjson").read_bytes() == by_http


def test_the_cli_export_shows_its_progress_on_stderr(server, varied, module_db_url):
    result = run_cli(["export", "--database-url", module_db_url, "--progress", "--every", "50"])
    assert result.stderr.splitlines() == [
        *(f"{n} records" for n in range(50, 160, 50)),
        "160 records: done",
    ]
    assert len(result.stdout_bytes.splitlines()) == 160


@pytest.fixture(scope="module")
def played(server: LiveServer) -> dict[str, Any]:
    """A real match played to its end, and its signed record."""
    api = ApiClient(server.base, server.http)
    match_id, tokens = create_match(api, "dekal", 2)
    end = play_out(api, "dekal", match_id, tokens, rng=3)
    record = server.http.get(server.url(f"/v1/games/dekal/matches/{match_id}/record")).json()
    return {"match": end, "record": record}


def test_a_line_of_the_export_saved_to_a_file_is_a_record_verify_checks(
    server, archive, played, public_key, module_db_url, tmp_path
):
    record, end = played["record"], played["match"]
    archive.put(
        Archived(
            id=record["id"],
            game="dekal",
            created_ms=T0,
            ended_ms=T0 + 1,
            archived_ms=T0 + 2,
            version=end["version"],
            seeded=False,
            seats=record["seats"],
            outcome=end["outcome"],
            final=end,
            record=record,
        )
    )
    archive.put(archived(99, T0, server.app.extensions["ludotheque.record_keys"].get()))
    for source in (
        exported(server),
        run_cli(["export", "--database-url", module_db_url]).stdout_bytes,
    ):
        line = source.splitlines(keepends=True)[0]
        path = tmp_path / "one.json"
        path.write_bytes(line)
        result = CliRunner().invoke(main, ["verify", "--key", public_key, str(path)])
        assert result.exit_code == 0, result.output
        assert result.output.startswith(f"ok: dekal match {record['id']}")


def test_exports_at_once_are_bounded_per_address_and_per_process(
    redis_url, module_db_url, archive, record_key
):
    for n in range(3):  # an export under way has sent its first records
        archive.put(archived(950 + n, T0 + n, record_key, "gaudi", ()))
    with LiveServer(
        {
            "REDIS_URL": redis_url,
            "DATABASE_URL": module_db_url,
            "EXPORTS_PER_ADDRESS": 1,
            "EXPORTS_PER_PROCESS": 2,
        }
    ) as live:
        client = live.app.test_client()

        def export(address: str, **kwargs: Any) -> Any:
            return client.get(
                "/v1/matches/export", environ_base={"REMOTE_ADDR": address}, **kwargs
            )

        first = export("203.0.113.1", buffered=False)  # not read yet: under way
        assert first.status_code == 200
        again = export("203.0.113.1")
        assert again.status_code == 429
        assert again.json["code"] == "too_many_exports"
        assert again.headers["Retry-After"] == "10"
        other = export("203.0.113.2", buffered=False)
        assert other.status_code == 200
        third = export("203.0.113.3")
        assert third.status_code == 429 and third.json["code"] == "too_many_exports"
        first.close()  # a client gone before reading gives its slot back
        assert export("203.0.113.1").status_code == 200
        other.close()
        assert export("203.0.113.3").status_code == 200


def test_without_a_database_both_answer_503_archive_unavailable(redis_url):
    with LiveServer({"REDIS_URL": redis_url}) as live:
        assert live.app.extensions["ludotheque.archive"] is None
        for path in ("/v1/matches", "/v1/matches/export"):
            answer = live.http.get(live.url(path))
            body = assert_problem(answer, 503, "archive_unavailable")
            assert "keeps no archive" in body["detail"]
            assert answer.headers["Retry-After"] == "3600"


def test_a_database_down_answers_503_archive_unavailable(redis_url, tmp_path):
    down = "postgresql://postgres@127.0.0.1:1/nothing"
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": down}) as live:
        for path in ("/v1/matches", "/v1/matches/export"):
            answer = live.http.get(live.url(path))
            assert_problem(answer, 503, "archive_unavailable")
            assert answer.headers["Retry-After"] == "1"


def test_one_address_holds_one_export_across_every_process(redis_url, module_db_url, record_key):
    """Adversary (issue 35): one address held two exports, one per server
    process; the slot per address is now counted in Redis, for every process."""
    config = {"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}
    first_process, second_process = LiveServer(config), LiveServer(config)
    try:
        put = first_process.app.extensions["ludotheque.archive"]
        for n in range(3):
            put.put(archived(900 + n, T0 + n, record_key, "dekal", ()))
        one, other = first_process.app.test_client(), second_process.app.test_client()
        address = {"REMOTE_ADDR": "203.0.113.77"}
        held = one.get("/v1/matches/export", environ_base=address, buffered=False)
        assert held.status_code == 200
        refused = other.get("/v1/matches/export", environ_base=address)
        assert refused.status_code == 429 and refused.json["code"] == "too_many_exports"
        held.close()
        assert other.get("/v1/matches/export", environ_base=address).status_code == 200
    finally:
        first_process.stop()
        second_process.stop()


def test_an_export_nobody_reads_is_cut_off_and_frees_its_slots(tmp_path, redis_url):
    """Adversary (issue 35): exports opened and never read held every slot
    for as long as their client liked (8 minutes and counting). Under
    gunicorn, a client that takes nothing for LUDOTHEQUE_EXPORT_STALL_S is
    cut off, and others export again."""
    import os
    import socket

    from service.store.database import default_url, engine_for
    from service.store.embedded import free_port
    from tests.support.servers import interrupt, start_serve

    data = tmp_path / "data"
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "LUDOTHEQUE_EXPORT_STALL_S": "2"}
    env["LUDOTHEQUE_EXPORTS_PER_PROCESS"] = "1"
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    server = start_serve(data, port, env, workers=1)
    engine = engine_for(default_url(data))
    try:
        archive = Archive(engine)
        key = from_pem(new_pem())
        big = {"format": "ludotheque-record/1", "padding": "x" * 8000}
        for n in range(1500):  # 12 MB: more than the socket buffers hold
            row = archived(2000 + n, T0 + n, key, "pacal", ())
            archive.put(Archived(**{**row.__dict__, "record": {**big, "id": row.id}}))
        request = f"GET /v1/matches/export HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        stalled.connect(("127.0.0.1", port))
        stalled.sendall(request)
        time.sleep(0.5)  # its answer began, and the server's writes wait on the client
        url = f"http://127.0.0.1:{port}/v1/matches/export?limit=1"
        blocked = requests.get(url, timeout=10)
        assert blocked.status_code == 429 and blocked.json()["code"] == "too_many_exports"
        deadline = time.monotonic() + 20
        while (answer := requests.get(url, timeout=10)).status_code == 429:
            assert time.monotonic() < deadline, "the stalled export kept its slot"
            time.sleep(0.5)
        assert answer.status_code == 200 and answer.text.count("\n") == 1
        stalled.close()
    finally:
        interrupt(server)
        engine.dispose()


@pytest.mark.parametrize(
    "moment",
    [
        "20261128T000000Z",
        "2026-11-28T01:03Z",
        "2026-11-28T01:03:00+0000",
        "2026-11-28T01:03:00+00",
        "2026-11-28T01:03:00,5Z",
        "2026-11-28 01:03:00Z",
        "2026-11-28T01:03:00",
        "2026-W48-6T01:03:00Z",
    ],
)
def test_since_and_until_take_rfc_3339_and_nothing_else(server, moment):
    """Adversary (issue 35): ISO 8601 forms that are not RFC 3339 were taken."""
    for name in ("since", "until"):
        answer = server.http.get(server.url("/v1/matches"), params={name: moment})
        assert_problem(answer, 422, "invalid_request")


def test_rfc_3339_lower_case_and_long_fractions_are_read(server):
    for moment in ("2026-11-28t01:03:00z", "2026-11-28T01:03:00.1234567890123+05:30"):
        answer = server.http.get(server.url("/v1/matches"), params={"since": moment})
        assert answer.status_code == 200, answer.text


def test_an_export_read_slowly_keeps_its_slot_for_as_long_as_it_runs(
    redis_url, module_db_url, archive, record_key, monkeypatch
):
    """Adversary, round 2 (issue 35): the lease of an export whose client
    read slowly lapsed between two writes, and the same address opened
    another (11 at once from one address). The lease is renewed from beside
    the export, however long a write takes."""
    from service.http import history

    monkeypatch.setattr(history, "EXPORT_LEASE_S", 1.0)
    for n in range(3):
        archive.put(archived(980 + n, T0 + n, record_key, "pacal", ()))
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": module_db_url}) as live:
        client = live.app.test_client()
        address = {"REMOTE_ADDR": "203.0.113.88"}
        held = client.get("/v1/matches/export", environ_base=address, buffered=False)
        assert held.status_code == 200
        time.sleep(3.5)  # three leases and more: renewed meanwhile
        again = client.get("/v1/matches/export", environ_base=address)
        assert again.status_code == 429 and again.json["code"] == "too_many_exports"
        held.close()
        assert client.get("/v1/matches/export", environ_base=address).status_code == 200
