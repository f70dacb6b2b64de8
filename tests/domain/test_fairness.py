"""Provably fair deals, over HTTP: a seed commitment from creation on, the
seed and salt revealed with the outcome, the record readable by anyone
after the end, and `ludotheque verify` (or `service.domain.fairness.verify`)
catching every tampering with it."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from engines import GAMES
from service.app import create_app
from service.domain.endings import ended_early
from service.domain.fairness import commitment, verify
from service.domain.signing import from_pem, new_pem, sign
from service.http.game_schemas import game_schemas, record_schema
from service.store.matches import match_key
from tests.engines.conformance import new_match
from tests.support.client import ApiClient
from tests.support.matches import play_out
from tests.support.problems import assert_problem

GAME_NAMES = sorted(GAMES)
# bounded: random play can draw and discard for ever on a blocked Ducale table
OPTIONS = {"ducale": {"target_score": 1, "max_stock_rebuilds": 3}}
LUDOTHEQUE = str(Path(sys.executable).with_name("ludotheque"))
FAIRNESS_DOC = Path(__file__).parents[2] / "docs" / "clients" / "fairness.md"


def body(game: str, players: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    found = {"players": players, **extra}
    if game in OPTIONS:
        found["options"] = OPTIONS[game]
    return found


def record_url(api: ApiClient, game: str, match_id: str) -> str:
    return f"{api.base}/v1/games/{game}/matches/{match_id}/record"


def play_to_the_end(
    api: ApiClient, game: str, match: dict[str, Any], tokens: list[str], seed: int
) -> list[dict[str, Any]]:
    """Play random legal actions until the end, checking each answer's
    fairness fields on the way; return every answer."""
    rng = random.Random(seed)
    answers = [match]
    for _ in range(20_000):
        if match["status"] == "finished":
            return answers
        assert match["outcome"] is None
        assert match["seed_commitment"] == answers[0]["seed_commitment"]
        seat = rng.choice(match["to_act"])
        actions = api.legal(game, match["id"], tokens[seat]).json()["actions"]
        played = api.act(game, match["id"], tokens[seat], rng.choice(actions))
        assert played.status_code == 200, played.text
        match = played.json()
        answers.append(match)
    raise AssertionError("the match did not end")


def finished_match(api: ApiClient, game: str, seeded: bool = False) -> dict[str, Any]:
    """A two-seat match played to the end over HTTP: its id, its answers, its record."""
    extra = {"seed": 77} if seeded else {}
    created = api.create(game, body(game, [{"name": "Ada"}, {"name": "Bob"}], **extra))
    assert created.status_code == 201, created.text
    match = created.json()
    tokens = [seat["token"] for seat in match["seats"]]
    too_early = api.http.get(record_url(api, game, match["id"]))
    assert_problem(too_early, 409, "match_not_over")
    answers = play_to_the_end(api, game, match, tokens, seed=5)
    record = api.http.get(record_url(api, game, match["id"]))  # no token: anyone may read it
    assert record.status_code == 200, record.text
    # the same for everyone and final: any cache may keep it
    assert record.headers["Cache-Control"] == "public, max-age=86400"
    return {"id": match["id"], "answers": answers, "tokens": tokens, "record": record.json()}


def spectator_log(api: ApiClient, game: str, match_id: str) -> list[dict[str, Any]]:
    seen, after = [], 0
    while page := api.events(game, match_id, after=after).json()["events"]:
        seen += page
        after = page[-1]["index"]
    return seen


@pytest.fixture(scope="module")
def records(live) -> dict[str, dict[str, Any]]:
    api = ApiClient(live.base, live.http)
    return {game: finished_match(api, game) for game in GAME_NAMES}


def run_command(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([LUDOTHEQUE, *args], capture_output=True, text=True, timeout=120)


def run_verify(live, tmp_path: Path, record: dict[str, Any]) -> subprocess.CompletedProcess:
    """`ludotheque verify` of ``record``, with the live server's public key."""
    path = tmp_path / "record.json"
    path.write_bytes(orjson.dumps(record))
    return run_command(["verify", "--key", public_key(live).hex(), str(path)])


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_outcome_reveals_the_seed_and_salt_of_the_commitment_shown_from_creation(
    live, records, game
):
    api = ApiClient(live.base, live.http)
    found = records[game]
    first, last = found["answers"][0], found["answers"][-1]
    assert re.fullmatch("[0-9a-f]{64}", first["seed_commitment"])
    assert first["seeded"] is False
    outcome = last["outcome"]
    assert re.fullmatch("[0-9a-f]{64}", outcome["salt"])
    assert outcome["seeded"] is False
    assert commitment(outcome["seed"], outcome["salt"]) == first["seed_commitment"]
    assert (
        hashlib.sha256(
            outcome["seed"].to_bytes(8, "big") + bytes.fromhex(outcome["salt"])
        ).hexdigest()
        == first["seed_commitment"]
    ), "the documented encoding: 8 bytes of seed, big-endian, then the 32 bytes of salt"
    # The seed is the match's: it sets up the very deal that was played.
    engine = GAMES[game]
    dealt = new_match(engine, 2, outcome["seed"], OPTIONS.get(game))
    assert orjson.loads(orjson.dumps(engine.view(dealt, None))) == first["view"]
    # Every view and the log say the same.
    spectator = api.get(game, found["id"]).json()
    assert spectator["seed_commitment"] == first["seed_commitment"]
    assert spectator["outcome"]["seed"] == outcome["seed"]
    events: list[dict[str, Any]] = []
    after = 0
    while page := api.events(game, found["id"], after=after).json():
        if not page["events"]:
            break
        events += page["events"]  # a long match's log takes more than one page
        after = page["next"]
    created, over = events[0], events[-1]
    assert created["type"] == "match_created"
    assert created["seed_commitment"] == first["seed_commitment"]
    assert created["seeded"] is False
    assert over["type"] == "match_over"
    assert (over["seed"], over["salt"]) == (outcome["seed"], outcome["salt"])
    assert over["seeded"] is False


@pytest.mark.parametrize("game", GAME_NAMES)
def test_the_record_replays_to_the_outcome_and_verifies(live, tmp_path, records, game):
    api = ApiClient(live.base, live.http)
    found = records[game]
    record = found["record"]
    last = found["answers"][-1]
    assert record["game"] == game and record["id"] == found["id"]
    assert [s["name"] for s in record["seats"]] == ["Ada", "Bob"]
    assert (record["seed"], record["salt"]) == (last["outcome"]["seed"], last["outcome"]["salt"])
    assert record["seed_commitment"] == found["answers"][0]["seed_commitment"]
    assert len(record["actions"]) == len(found["answers"]) - 1
    # Beside each action, the public events it caused: what a spectator saw, in order.
    service_events = {"match_created", "match_started", "seat_joined", "timeout"}
    seen = [
        {k: v for k, v in e.items() if k not in ("index", "version", "seeded", "seed", "salt")}
        for e in spectator_log(api, game, found["id"])
        if e["type"] not in service_events
    ]
    assert [e for step in record["actions"] for e in step["events"]] == seen
    assert verify(record) == [] and verify(record, public_key(live)) == []
    # The record and the final answer are what the contract says.
    assert record_schema(GAMES[game])().validate(record) == {}
    assert game_schemas(GAMES[game])[2]().validate(found["answers"][-1]) == {}
    checked = run_verify(live, tmp_path, record)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.startswith("ok: ")


def tampered_action(game: str, record: dict[str, Any]) -> dict[str, Any]:
    """The record with one action (from the middle on) replaced by another
    action that was legal for the same seat at that point."""
    engine = GAMES[game]
    state = engine.setup(copy.deepcopy(record["options"]), len(record["seats"]), record["seed"])
    actions = record["actions"]
    for number, step in enumerate(actions):
        if number >= len(actions) // 2:
            others = [
                a
                for a in orjson.loads(orjson.dumps(engine.legal_actions(state, step["seat"])))
                if a != step["action"]
            ]
            if others:
                changed = copy.deepcopy(record)
                changed["actions"][number]["action"] = others[0]
                return changed
        engine.apply(state, step["seat"], copy.deepcopy(step["action"]))
    raise AssertionError("no action had an alternative")


def tamperings(game: str, record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = {"an action": tampered_action(game, record)}

    def changed(**fields: Any) -> dict[str, Any]:
        return copy.deepcopy(record) | fields

    found["the seed"] = changed(seed=record["seed"] ^ 1)
    salt = record["salt"]
    found["the salt"] = changed(salt=("0" if salt[0] != "0" else "1") + salt[1:])
    found["the commitment"] = changed(seed_commitment=commitment(record["seed"], "ab" * 32))
    seats = copy.deepcopy(record["actions"])
    seats[0]["seat"] = 1 - seats[0]["seat"]
    found["an action's seat"] = changed(actions=seats)
    found["the last action, dropped"] = changed(actions=record["actions"][:-1])
    events = copy.deepcopy(record["actions"])
    first = next(step for step in events if step["events"])
    first["events"][0]["tampered"] = True
    found["an event"] = changed(actions=events)
    swapped = copy.deepcopy(record["outcome"])
    swapped["winners"] = [1 - swapped["winners"][0]] if len(swapped["winners"]) == 1 else [0]
    found["the winners"] = changed(outcome=swapped)
    return found


@pytest.mark.parametrize("game", GAME_NAMES)
def test_every_tampering_with_a_record_is_caught(live, tmp_path, records, game):
    record = records[game]["record"]
    for what, changed in tamperings(game, record).items():
        assert changed != record
        assert verify(changed), f"verify missed a change to {what}"
    # The command too, for one tampering of each kind of field.
    for what in ("an action", "the seed", "the salt"):
        checked = run_verify(live, tmp_path, tamperings(game, record)[what])
        assert checked.returncode == 1, f"{what}: {checked.stdout}"
        assert "FAILED" in checked.stderr


def test_the_commitment_matches_the_documented_test_vectors():
    text = FAIRNESS_DOC.read_text(encoding="utf-8")
    vectors = re.findall(r"\| `(\d+)` \| `([0-9a-f]{2})` × 32 \| `([0-9a-f]{64})` \|", text)
    assert len(vectors) == 2
    for seed, salt_byte, expected in vectors:
        assert commitment(int(seed), salt_byte * 32) == expected


def test_the_record_waits_for_the_end_and_the_match_must_exist(live):
    api = ApiClient(live.base, live.http)
    created = api.create("dekal", body("dekal", [{"name": "Ada"}, {}])).json()
    assert_problem(api.http.get(record_url(api, "dekal", created["id"])), 409, "match_not_over")
    assert_problem(api.http.get(record_url(api, "dekal", "0" * 32)), 404, "match_not_found")
    assert_problem(api.http.get(record_url(api, "pacal", created["id"])), 404, "match_not_found")


def test_a_seeded_match_says_so_to_the_end_and_in_its_record(live, tmp_path):
    api = ApiClient(live.base, live.http)
    found = finished_match(api, "dekal", seeded=True)
    assert all(answer["seeded"] is True for answer in found["answers"])
    outcome = found["answers"][-1]["outcome"]
    assert outcome["seeded"] is True and outcome["seed"] == 77
    events = api.events("dekal", found["id"]).json()["events"]
    assert events[0]["seeded"] is True and events[-1]["seeded"] is True
    assert found["record"]["seeded"] is True
    assert verify(found["record"]) == []
    checked = run_verify(live, tmp_path, found["record"])
    assert checked.returncode == 0 and "seeded" in checked.stdout


def test_a_match_stored_before_commitments_keeps_working_without_one(live, redis_client):
    """Matches written before this change have no salt: they play and
    finish as before, say null where a commitment would be, and their
    record replays but is reported as unproven."""
    api = ApiClient(live.base, live.http)
    created = api.create("dekal", body("dekal", [{"name": "Ada"}, {"name": "Bob"}])).json()
    stored = orjson.loads(redis_client.hget(match_key(created["id"]), "d"))
    for field in ("salt", "seeded"):
        del stored[field]
    redis_client.hset(match_key(created["id"]), "d", orjson.dumps(stored))
    match = api.get("dekal", created["id"]).json()
    assert match["seed_commitment"] is None and match["seeded"] is None
    tokens = [seat["token"] for seat in created["seats"]]
    answers = play_to_the_end(api, "dekal", match, tokens, seed=3)
    assert answers[-1]["outcome"]["salt"] is None
    record = api.http.get(record_url(api, "dekal", created["id"])).json()
    assert record["seed_commitment"] is None
    assert verify(record) == ["no commitment: this match was stored before commitments existed"]


def test_the_few_lines_of_python_in_the_docs_verify_a_record(tmp_path, records):
    """docs/clients/fairness.md shows a player how to check a deal in Python: those
    exact lines accept a true record and reject a tampered one."""
    text = FAIRNESS_DOC.read_text(encoding="utf-8")
    snippet = re.search(r"```python\n(.*?)```", text, re.S)
    assert snippet, "docs/clients/fairness.md shows the check in Python"
    record = records["pacal"]["record"]
    for given, holds in ((record, True), (tamperings("pacal", record)["the seed"], False)):
        (tmp_path / "record.json").write_text(json.dumps(given), encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-c", snippet.group(1)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (run.returncode == 0) is holds, run.stdout + run.stderr


# -- signed records: every field bound -------------------------------------------
def public_key(live) -> bytes:
    answer = live.http.get(live.url("/v1/record-key"))
    assert answer.status_code == 200, answer.text
    return bytes.fromhex(answer.json()["public_key"])


def server_key(live) -> Any:
    """The live server's private record key: what a dishonest server could sign with."""
    return live.app.extensions["ludotheque.record_keys"].get()


def lifecycle(api: ApiClient, game: str, match_id: str, what: str, token: str) -> None:
    url = f"{api.base}/v1/games/{game}/matches/{match_id}/{what}"
    answer = api.http.post(url, headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200, answer.text


def ended_early_record(api: ApiClient, names: list[str], endings: list[tuple[str, int]]) -> Any:
    """The record of a Dékal match whose seats played two moves, then ended
    as ``endings`` say (("resign" or "abort", seat), in order)."""
    created = api.create("dekal", body("dekal", [{"name": name} for name in names])).json()
    tokens = [seat["token"] for seat in created["seats"]]
    play_out(api, "dekal", created["id"], tokens, moves=2)
    for what, seat in endings:
        lifecycle(api, "dekal", created["id"], what, tokens[seat])
    answer = api.http.get(record_url(api, "dekal", created["id"]))
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.fixture(scope="module")
def resigned(live) -> dict[str, Any]:
    """Ada and Bob played two moves; then Bob resigned."""
    return ended_early_record(ApiClient(live.base, live.http), ["Ada", "Bob"], [("resign", 1)])


def revealing(record: dict[str, Any], outcome: dict[str, Any]) -> dict[str, Any]:
    return {**outcome, **{k: record["outcome"][k] for k in ("seeded", "seed", "salt")}}


def doctored(what: str, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (Bob resigned after two moves) with one field changed as a
    cheat would: each change is one the replay alone cannot always see."""
    changed = copy.deepcopy(record)
    if what == "an ending's seat":
        changed["endings"][0]["seat"] = 0
        changed["outcome"] = revealing(record, ended_early(2, [0], "resignation", 0))
    elif what == "the outcome":
        changed["outcome"]["winners"] = [1]
    elif what == "a resignation into an abort":
        changed["endings"][0]["type"] = "aborted"
        changed["outcome"] = revealing(record, ended_early(2, [], "abort", 1))
    elif what == "the seats' names":
        changed["seats"][0]["name"], changed["seats"][1]["name"] = "Bob", "Ada"
    elif what == "the id":
        changed["id"] = "f" * 32
    elif what == "the options":
        changed["options"]["target_score"] = 7
    elif what == "seeded":
        changed["seeded"] = changed["outcome"]["seeded"] = True
    elif what == "an action":
        changed = tampered_action("dekal", record)
    return changed


DOCTORINGS = [
    "an ending's seat",
    "the outcome",
    "a resignation into an abort",
    "the seats' names",
    "the id",
    "the options",
    "seeded",
    "an action",
]


def test_the_server_publishes_its_record_key_and_signs_every_record(live, resigned):
    answer = live.http.get(live.url("/v1/record-key"))
    assert answer.status_code == 200, answer.text
    assert answer.headers["Cache-Control"] == "public, max-age=3600"
    key = answer.json()
    assert key["algorithm"] == "Ed25519"
    assert re.fullmatch("[0-9a-f]{64}", key["public_key"])
    assert key["key_id"] == hashlib.sha256(bytes.fromhex(key["public_key"])).hexdigest()[:16]
    assert resigned["signature"]["key_id"] == key["key_id"]
    assert verify(resigned, bytes.fromhex(key["public_key"])) == []


@pytest.mark.parametrize("what", DOCTORINGS)
def test_a_doctored_record_fails_the_service_check(live, resigned, what):
    changed = doctored(what, resigned)
    assert changed != resigned
    assert verify(resigned, public_key(live)) == []
    assert verify(changed, public_key(live)), f"verify missed a change to {what}"


@pytest.mark.parametrize("what", DOCTORINGS)
def test_a_doctored_record_fails_the_command(live, tmp_path, resigned, what):
    key = public_key(live).hex()
    path = tmp_path / "record.json"
    path.write_bytes(orjson.dumps(doctored(what, resigned)))
    checked = run_command(["verify", "--key", key, str(path)])
    assert checked.returncode == 1, f"{what}: {checked.stdout}"
    assert "FAILED" in checked.stderr and "Traceback" not in checked.stderr


def test_the_command_checks_the_signature_with_the_key_given_or_fetched(live, tmp_path, resigned):
    path = tmp_path / "record.json"
    path.write_bytes(orjson.dumps(resigned))
    key_file = tmp_path / "record-key.json"
    key_file.write_bytes(live.http.get(live.url("/v1/record-key")).content)
    for how in (
        ["--key", public_key(live).hex()],
        ["--key", str(key_file)],
        ["--server", live.base],
    ):
        checked = run_command(["verify", *how, str(path)])
        assert checked.returncode == 0, f"{how}: {checked.stderr}"
        assert "signed by " + resigned["signature"]["key_id"] in checked.stdout
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"public_key": "ab" * 32}), encoding="utf-8")
    checked = run_command(["verify", "--key", str(other), str(path)])
    assert checked.returncode == 1 and "not by the key given" in checked.stderr


def test_a_record_from_before_signatures_is_reported_unsigned_not_a_crash(
    live, tmp_path, resigned
):
    unsigned = {k: v for k, v in resigned.items() if k != "signature"}
    problems = verify(unsigned, public_key(live))
    assert len(problems) == 1 and problems[0].startswith("no signature")
    path = tmp_path / "record.json"
    path.write_bytes(orjson.dumps(unsigned))
    checked = run_command(["verify", "--server", live.base, str(path)])
    assert checked.returncode == 1
    assert "FAILED: no signature" in checked.stderr and "Traceback" not in checked.stderr


# Endings a server could not have written, signed nonetheless (by a dishonest
# or broken server): the replay finds them illegal whatever the signature says.
def test_an_abort_after_a_persons_action_is_illegal_even_when_signed(live, resigned):
    changed = sign(doctored("a resignation into an abort", resigned), server_key(live))
    assert any("abort" in problem for problem in verify(changed, public_key(live)))


def test_an_abort_after_bots_actions_only_is_legal(live):
    api = ApiClient(live.base, live.http)
    players = [{"bot": "random"}, {"name": "Ada"}]
    for seed in range(50):  # a deal where the bot plays first (a seeded practice match)
        created = api.create("pacal", body("pacal", players, seed=seed)).json()
        if created["to_act"] == [0]:
            break
    match_id, token = created["id"], created["seats"][1]["token"]
    turns = live.app.extensions["ludotheque.turns"]
    # the bot's turns, as a worker plays them, until Ada is to act
    while turns.play(match_id, 0.01, random.Random(1)):
        pass
    lifecycle(api, "pacal", match_id, "abort", token)
    record = api.http.get(record_url(api, "pacal", match_id)).json()
    assert record["endings"][0]["type"] == "aborted"
    assert record["actions"] and {step["seat"] for step in record["actions"]} == {0}
    assert verify(record, public_key(live)) == []


def test_a_seat_cannot_resign_twice_nor_after_the_end_even_when_signed(live):
    api = ApiClient(live.base, live.http)
    record = ended_early_record(api, ["Ada", "Bob", "Cy"], [("resign", 2), ("resign", 1)])
    assert verify(record, public_key(live)) == []
    key = server_key(live)
    twice = copy.deepcopy(record)
    twice["endings"][1]["seat"] = 2
    twice["outcome"] = revealing(record, ended_early(3, [2, 2], "resignation", 2))
    assert any("already resigned" in p for p in verify(sign(twice, key), public_key(live)))
    after_the_end = copy.deepcopy(record)
    after_the_end["endings"].append({**record["endings"][-1], "seat": 0})
    assert any("over" in p for p in verify(sign(after_the_end, key), public_key(live)))
    no_such_seat = copy.deepcopy(record)
    no_such_seat["endings"][0]["seat"] = 5
    assert any("no seat 5" in p for p in verify(sign(no_such_seat, key), public_key(live)))


def test_the_few_lines_of_python_in_the_docs_check_a_signature(live, tmp_path, resigned):
    """docs/clients/fairness.md's canonical form, as its second Python snippet
    writes it with nothing but `cryptography`: it accepts the served record
    and rejects one with a name changed."""
    text = FAIRNESS_DOC.read_text(encoding="utf-8")
    snippet = re.findall(r"```python\n(.*?)```", text, re.S)[1]
    assert "Ed25519PublicKey" in snippet
    (tmp_path / "record-key.json").write_bytes(live.http.get(live.url("/v1/record-key")).content)
    renamed = doctored("the seats' names", resigned)
    for given, holds in ((resigned, True), (renamed, False)):
        (tmp_path / "record.json").write_text(json.dumps(given), encoding="utf-8")
        run = subprocess.run(
            [sys.executable, "-c", snippet],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert (run.returncode == 0) is holds, run.stdout + run.stderr


def test_an_abort_after_a_move_the_clock_played_is_legal_and_says_so(live, redis_client):
    """A seat whose turn clock ran out did not act: the server played for it
    (``timed_out`` in the record), and the match may still be aborted."""
    api = ApiClient(live.base, live.http)
    players = [{"name": "Ada"}, {"name": "Bob"}]
    created = api.create("pacal", {"players": players, "options": {"turn_timeout_s": 60}})
    assert created.status_code == 201, created.text
    match_id, tokens = created.json()["id"], [s["token"] for s in created.json()["seats"]]
    stored = orjson.loads(redis_client.hget(match_key(match_id), "d"))
    stored["deadlines"] = [0 if deadline else None for deadline in stored["deadlines"]]
    redis_client.hset(match_key(match_id), "d", orjson.dumps(stored))  # the clock ran out
    turns = live.app.extensions["ludotheque.turns"]
    assert turns.play(match_id, 0.01, random.Random(1))
    lifecycle(api, "pacal", match_id, "abort", tokens[1])
    record = api.http.get(record_url(api, "pacal", match_id)).json()
    assert [step["timed_out"] for step in record["actions"]] == [True]
    assert verify(record, public_key(live)) == []
    by_hand = copy.deepcopy(record)
    by_hand["actions"][0]["timed_out"] = False
    problems = verify(sign(by_hand, server_key(live)), public_key(live))
    assert any("abort after a person's action" in p for p in problems)


def test_a_deployment_signs_with_the_key_file_it_supplies(live_server, redis_url, tmp_path):
    path = tmp_path / "record-key.pem"
    path.write_bytes(new_pem())
    server = live_server(RECORD_KEY_FILE=str(path))
    api = ApiClient(server.base, server.http)
    published = server.http.get(server.url("/v1/record-key")).json()
    assert published == from_pem(path.read_bytes()).published()
    record = ended_early_record(api, ["Ada", "Bob"], [("resign", 0)])
    assert record["signature"]["key_id"] == published["key_id"]
    assert verify(record, bytes.fromhex(published["public_key"])) == []
    path.write_text("not a key", encoding="utf-8")
    with pytest.raises(RuntimeError, match="LUDOTHEQUE_RECORD_KEY_FILE"):
        create_app({"REDIS_URL": redis_url, "RECORD_KEY_FILE": str(path)})


def duplicated(record: dict[str, Any], name: str, first: Any) -> bytes:
    """``record`` as JSON whose ``name`` appears twice: ``first``, then its own
    value (a parser that keeps the first sees the doctored one)."""
    text = orjson.dumps(record).decode()
    return ("{" + json.dumps(name) + ":" + json.dumps(first) + "," + text[1:]).encode()


@pytest.mark.parametrize(
    "name, first",
    [
        ("outcome", {"winners": [0], "ranking": [[0], [1]]}),
        ("id", "0" * 32),
    ],
)
def test_the_command_refuses_a_record_with_a_repeated_key(live, tmp_path, resigned, name, first):
    """Adversary's finding: a doctored value before the genuine one verified
    ('ok'), while a reader that keeps the first value shows the doctored one."""
    path = tmp_path / "record.json"
    path.write_bytes(duplicated(resigned, name, first))
    checked = run_command(["verify", "--key", public_key(live).hex(), str(path)])
    assert checked.returncode != 0, checked.stdout
    assert "repeat" in checked.stderr and "Traceback" not in checked.stderr


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s | {"outcome": {"winners": [0]}},
        lambda s: s | {"value": s["value"].upper()},
        lambda s: s | {"value": " ".join(s["value"][i : i + 2] for i in range(0, 128, 2))},
    ],
    ids=["an extra member", "upper-case hex", "spaced hex"],
)
def test_the_signature_object_is_bound_too(live, resigned, change):
    changed = copy.deepcopy(resigned)
    changed["signature"] = change(resigned["signature"])
    assert verify(changed, public_key(live)), "a changed signature object verified"
