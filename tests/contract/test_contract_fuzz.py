"""Schemathesis over every operation of the committed contract, against the
live app: no 5xx, and every answer conforms to its documented status, media
type, headers and schema. Bounded: a fixed number of examples per operation,
derandomized, so that CI runs the same cases every time."""

from __future__ import annotations

import hashlib
from pathlib import Path

import orjson
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from engines import GAMES
from service.domain.signing import sign
from service.store.archive import Archived
from service.store.database import migrate
from tests.support.client import ApiClient
from tests.support.servers import LiveServer

CONTRACT = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
# Short matches where a game allows it.
OPTIONS = {"ducale": {"target_score": 100}}


# The committed contract (test_openapi.py checks it is the one the app serves).
schema = schemathesis.openapi.from_path(CONTRACT)


@pytest.fixture(scope="module")
def archived_live(redis_url, tmp_path_factory):
    """The app with an archive (SQLite) holding a few finished matches, for the
    operations that read it (/v1/matches...), which answer 503 without one."""
    url = f"sqlite:///{tmp_path_factory.mktemp('archive') / 'ludotheque.db'}"
    migrate(url)
    with LiveServer({"REDIS_URL": redis_url, "DATABASE_URL": url}) as server:
        archive = server.app.extensions["ludotheque.archive"]
        key = server.app.extensions["ludotheque.record_keys"].get()
        for n, game in enumerate(sorted(GAMES)):
            match_id = f"{n + 1:032x}"
            archive.put(
                Archived(
                    id=match_id,
                    game=game,
                    created_ms=1_767_225_600_000 + n,
                    ended_ms=1_767_225_700_000 + n,
                    archived_ms=1_767_225_700_500,
                    version=9,
                    seeded=False,
                    seats=[
                        {"seat": 0, "name": "Ada", "bot": None},
                        {"seat": 1, "name": None, "bot": "mcts"},
                    ],
                    outcome={"winners": [0], "seeded": False, "seed": n, "salt": "00" * 32},
                    final={},
                    record=sign({"format": "ludotheque-record/1", "id": match_id}, key),
                )
            )
        yield server
        archive.engine.dispose()


@pytest.fixture(scope="module")
def matches(live) -> dict[str, tuple[str, list[str]]]:
    """One active match per game, so that generated requests also reach real ones."""
    api = ApiClient(live.base)
    found = {}
    for name in GAMES:
        body = {"players": [{"name": "Ada"}, {"name": "Bob"}], "seed": 1}
        if name in OPTIONS:
            body["options"] = OPTIONS[name]
        match = api.create(name, body).json()
        found[name] = (match["id"], [seat["token"] for seat in match["seats"]])
    return found


def aim_at_a_real_match(case, matches) -> None:
    """Half the cases (chosen by a hash, so runs repeat) address a real match,
    with a real token on half of those: random ids alone only ever meet 404."""
    path = case.operation.path
    game = path.split("/")[3] if path.startswith("/v1/games/") else None
    if game not in matches or "match_id" not in (case.path_parameters or {}):
        return
    if path.endswith("/stream"):
        return  # a stream on a live match lasts until the match ends
    digest = hashlib.sha256(repr((case.path_parameters, case.body)).encode()).digest()
    if digest[0] % 2:
        return
    match_id, tokens = matches[game]
    case.path_parameters["match_id"] = match_id
    if isinstance(case.query, dict) and "wait" in case.query:
        case.query["wait"] = 0  # no long poll, no wait for a turn
    if digest[1] % 2:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {tokens[digest[2] % 2]}"}


@schema.parametrize()
@settings(
    max_examples=10,
    derandomize=True,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_answers_as_documented(case, live, archived_live, matches):
    aim_at_a_real_match(case, matches)
    # the operations that need a database (the archive, players and apps, ratings) go to the
    # app with one
    path = case.operation.path
    with_database = path.startswith(("/v1/matches", "/v1/players", "/v1/apps"))
    with_database = with_database or path.endswith("/leaderboard")
    server = archived_live if with_database else live
    response = case.call(base_url=server.base, session=server.http, timeout=10)
    case.validate_response(response, checks=CHECKS)


def documented_media_types(contract: dict, path: str, method: str, status: str) -> set[str]:
    response = contract["paths"][path][method]["responses"][status]
    if "$ref" in response:
        response = contract["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    return set(response.get("content", {}))


def test_a_bad_query_parameter_is_documented_as_problem_json(live):
    contract = orjson.loads(CONTRACT.read_bytes())
    for game in GAMES:
        url = f"{live.base}/v1/games/{game}/matches/{'0' * 32}"
        for tail, query in (("/events", {"wait": 31}), ("/stream", {"after": -1})):
            answer = live.http.get(url + tail, params=query, timeout=10)
            assert answer.status_code == 422
            assert answer.headers["Content-Type"] == "application/problem+json"
            path = f"/v1/games/{game}/matches/{{match_id}}{tail}"
            assert documented_media_types(contract, path, "get", "422") == {
                "application/problem+json"
            }
    default = contract["components"]["responses"]["DEFAULT_ERROR"]
    assert set(default["content"]) == {"application/problem+json"}
