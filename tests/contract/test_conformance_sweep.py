"""Every answer the server sends is one the contract documents.

A sweep derived from the committed contract: for every operation it names,
requests as a seat, as a spectator, with a wrong or malformed token, on an
unknown, waiting, active and finished match, with valid, empty, malformed
and oversized bodies, with stale and current versions, with every other
method on the path, against a rate-limited server and against a server
whose store is down. Each answer's status must be documented for its
operation, each header it carries documented for that status (and each
documented required header present), its media type documented, and its
body valid against the documented schema (each event of a stream too).
New operations are swept as they appear in the contract.
"""

from __future__ import annotations

import functools
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema_rs
import pytest
import requests

from tests.contract.conformance import contract, operation
from tests.support.servers import STORE_DOWN
from tests.support.streams import text_events

METHODS = ["get", "put", "post", "delete", "patch"]
# Headers of HTTP itself, which no operation documents.
TRANSPORT = {"content-type", "content-length", "date", "server", "connection", "transfer-encoding"}
UNKNOWN_MATCH = "0" * 32
WRONG_TOKEN = "A" * 43


@dataclass
class Exchange:
    method: str
    path: str
    status: int
    headers: dict[str, str]
    media: str
    body: bytes
    events: list[Any] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.method} {self.path} -> {self.status}"


@functools.cache
def schema_validator(schema_json: str) -> Any:
    root = {"components": contract()["components"], "allOf": [json.loads(schema_json)]}
    return jsonschema_rs.Draft202012Validator(root)


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    validator = schema_validator(json.dumps(schema, sort_keys=True))
    return [str(e)[:300] for e in validator.iter_errors(instance)]


def header_spec(ref_or_spec: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in ref_or_spec:
        return contract()["components"]["headers"][ref_or_spec["$ref"].rsplit("/", 1)[1]]
    return ref_or_spec


def mismatches(exchange: Exchange) -> list[str]:
    """What in this exchange the contract does not say."""
    found = operation(exchange.path, exchange.method)
    if found is None:
        return []  # no path of the contract: nothing documents it (nor could)
    template, op = found
    where = f"{exchange.method} {template} -> {exchange.status}"
    if not op:
        # a method the path does not take: refused (405), or counted first (429)
        if exchange.status not in (405, 429):
            return [f"{where}: the contract has no such operation"]
        item = contract()["paths"][template]
        op = next(item[m] for m in METHODS if m in item)
    answer = op["responses"].get(str(exchange.status))
    if answer is None:
        return [f"{where}: status not documented"]
    problems = []
    documented = {
        name.lower(): header_spec(spec) for name, spec in answer.get("headers", {}).items()
    }
    for name in exchange.headers:
        if name.lower() not in TRANSPORT and name.lower() not in documented:
            problems.append(f"{where}: header {name} not documented")
    for name, spec in documented.items():
        if spec.get("required") and name not in {h.lower() for h in exchange.headers}:
            problems.append(f"{where}: documented header {name} missing")
    content = answer.get("content")
    if not content:
        if exchange.body:
            problems.append(f"{where}: a body where none is documented")
        return problems
    if exchange.media not in content:
        return [*problems, f"{where}: media type {exchange.media} not documented"]
    documented_body = content[exchange.media]
    if exchange.media == "text/event-stream":
        event_schema = documented_body.get("x-event-data")
        for event in exchange.events:
            problems += [f"{where}: event {e}" for e in schema_errors(event_schema, event)]
        return problems
    instance = json.loads(exchange.body)
    problems += [f"{where}: {e}" for e in schema_errors(documented_body["schema"], instance)]
    return problems


def streams(path: str, method: str) -> bool:
    """Whether the operation answers an event stream (read it briefly)."""
    found = operation(path.split("?")[0], method)
    answer = found[1].get("responses", {}).get("200", {}) if found else {}
    return "text/event-stream" in answer.get("content", {})


class Recorder:
    """Sends requests to one server and keeps every exchange. ``once``: a
    request sent before is not sent again (to a server whose state nothing
    changes, such as one whose store is down, it would get the same answer)."""

    def __init__(self, base: str, once: bool = False) -> None:
        self.base = base
        self.http = requests.Session()
        self.exchanges: list[Exchange] = []
        self.once = once
        self.sent: dict[str, Exchange] = {}

    def send(
        self,
        method: str,
        path: str,
        token: str | None = None,
        authorization: str | None = None,
        body: Any = None,
        raw: bytes | None = None,
        headers: dict[str, str] | None = None,
        params: dict[str, Any] | None = None,
    ) -> Exchange:
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        if authorization is not None:
            headers["Authorization"] = authorization
        if raw is not None:
            headers.setdefault("Content-Type", "application/json")
        if self.once:
            key = repr((method, path, sorted(headers.items()), params, body, raw))
            if key in self.sent:
                return self.sent[key]
        # a stream is read until 0.25 s pass without more (its backlog goes
        # out with its head, in one write); on a loaded machine its head may
        # take longer (a full run saw a 503 come late)
        waits = [0.25, 5] if streams(path, method) else [10]
        for wait in waits:
            try:
                answer = self.http.request(
                    method.upper(),
                    self.base + path,
                    json=body if raw is None else None,
                    data=raw,
                    headers=headers,
                    params=params,
                    stream=True,
                    timeout=(5, wait),
                )
                break
            except requests.exceptions.ReadTimeout:
                if wait == waits[-1]:
                    raise
        media = answer.headers.get("Content-Type", "").split(";")[0].strip()
        events: list[Any] = []
        if media == "text/event-stream":
            content = b""
            try:
                for chunk in answer.iter_content(chunk_size=None):
                    content += chunk
            except requests.exceptions.ConnectionError:
                pass  # a live match's stream goes on: what came first will do
            events = [data for _, data in text_events(content.decode())]
        else:
            content = answer.content
        answer.close()
        exchange = Exchange(
            method.lower(), path, answer.status_code, dict(answer.headers), media, content, events
        )
        self.exchanges.append(exchange)
        if self.once:
            self.sent[key] = exchange
        return exchange

    def json(self, *args: Any, **kwargs: Any) -> Any:
        return json.loads(self.send(*args, **kwargs).body)


# -- bodies and parameters from the contract ----------------------------------------


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = contract()["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def example(schema: dict[str, Any]) -> Any:
    """A minimal instance of ``schema``: its required members, smallest values."""
    schema = resolve(schema)
    for union in ("oneOf", "anyOf", "allOf"):
        if union in schema:
            return example(schema[union][0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        wanted = [k for k in props if k in schema.get("required", []) or "example" in props[k]]
        return {k: props[k].get("example", example(props[k])) for k in wanted}
    if kind == "array":
        return [example(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "x" * max(1, schema.get("minLength", 1))


def body_schema(op: dict[str, Any]) -> dict[str, Any] | None:
    body = op.get("requestBody", {}).get("content", {}).get("application/json")
    return body["schema"] if body else None


def game_prefixes() -> list[str]:
    return sorted(
        {m[1] for p in contract()["paths"] if (m := re.match(r"^(/v1/games/[a-z]+)/", p))}
    )


@dataclass
class Table:
    """One game's matches to aim at: each with its seats' tokens."""

    prefix: str
    active: str = ""
    tokens: list[str] = field(default_factory=list)
    waiting: str = ""
    open_seat: int = 0
    finished: str = ""
    finished_tokens: list[str] = field(default_factory=list)


def create(rec: Recorder, prefix: str, open_seats: int = 0, **extra: Any) -> dict[str, Any]:
    op = contract()["paths"][f"{prefix}/matches"]["post"]
    players = resolve(resolve(body_schema(op))["properties"]["players"])
    count = max(players.get("minItems", 1), min(2, players.get("maxItems", 2)))  # two seats
    seats = [{"name": f"P{i}"} for i in range(count - open_seats)] + [{}] * open_seats
    seed = {} if open_seats else {"seed": 7}  # a seed only where every seat is ours
    created = rec.send("post", f"{prefix}/matches", body={"players": seats, **seed, **extra})
    assert created.status == 201, created.body
    return json.loads(created.body)


def play_out(rec: Recorder, prefix: str, match: dict[str, Any], rng: random.Random) -> None:
    """Random legal moves, each chosen from the last answer, to the end."""
    tokens = [s["token"] for s in match["seats"]]
    path = f"{prefix}/matches/{match['id']}"
    views = [rec.json("get", path, token=t, params={"legal_actions": "true"}) for t in tokens]
    for _ in range(5000):
        if views[0]["status"] == "finished":
            return
        seat = next((s for s, v in enumerate(views) if v.get("legal_actions")), None)
        if seat is None:
            views = [
                rec.json("get", path, token=t, params={"legal_actions": "true"}) for t in tokens
            ]
            continue
        action = rng.choice(views[seat]["legal_actions"])
        answer = rec.send(
            "post",
            f"{path}/actions",
            token=tokens[seat],
            body=action,
            params={"legal_actions": "true"},
        )
        assert answer.status == 200, answer.body
        views[seat] = json.loads(answer.body)
        for other in range(len(tokens)):
            if other != seat:
                views[other] = rec.json(
                    "get", path, token=tokens[other], params={"legal_actions": "true"}
                )
    raise AssertionError(f"{path} did not finish")


SHORT = {"target_score": 1, "manches_to_win": 1}


def short_options(prefix: str) -> dict[str, Any]:
    op = contract()["paths"][f"{prefix}/matches"]["post"]
    options = resolve(resolve(body_schema(op))["properties"].get("options", {}))
    return {k: v for k, v in SHORT.items() if k in options.get("properties", {})}


def set_table(rec: Recorder, prefix: str) -> Table:
    table = Table(prefix)
    active = create(rec, prefix)
    table.active, table.tokens = active["id"], [s["token"] for s in active["seats"]]
    waiting = create(rec, prefix, open_seats=1)
    table.waiting, table.open_seat = waiting["id"], len(waiting["seats"]) - 1
    finished = create(rec, prefix, options=short_options(prefix))
    play_out(rec, prefix, finished, random.Random(1))
    table.finished, table.finished_tokens = finished["id"], [s["token"] for s in finished["seats"]]
    return table


def fill(template: str, match_id: str, seat: int) -> str:
    path = template.replace("{match_id}", match_id).replace("{seat}", str(seat))
    return re.sub(r"\{[^}]+\}", "x", path)


def sweep_operation(rec: Recorder, table: Table | None, template: str, method: str) -> None:
    op = contract()["paths"][template][method]
    schema = body_schema(op)
    valid = example(schema) if schema is not None else None
    query = {p["name"]: p for p in op.get("parameters", []) if p.get("in") == "query"}
    contexts: list[tuple[str, int, dict[str, Any]]] = [("", 0, {})]
    if table is not None:
        who = [
            {"token": table.tokens[0]},
            {"token": table.tokens[1]},
            {},
            {"token": WRONG_TOKEN},
            {"authorization": "Basic eA=="},
        ]
        contexts = [(table.active, 0, w) for w in who]
        contexts += [(UNKNOWN_MATCH, 0, who[0]), ("not-a-match", 0, {})]
        contexts += [(table.waiting, table.open_seat, w) for w in who[:3]]
        contexts += [(table.waiting, 99, {})]
        contexts += [
            (table.finished, 0, {"token": table.finished_tokens[0]}),
            (table.finished, 0, {}),
        ]
    for match_id, seat, who in contexts:
        path = fill(template, match_id, seat)
        if schema is None:
            rec.send(method, path, **who)
            for name, param in query.items():
                good = example(param["schema"])
                rec.send(method, path, params={name: good}, **who)
                rec.send(method, path, params={name: "-1"}, **who)
            continue
        bodies: list[dict[str, Any]] = [{"body": valid}, {"body": {}}, {"raw": b"{not json"}]
        bodies += [{"body": []}, {"raw": b"x" * (65 * 1024)}]
        if "legal-actions" not in path and table is not None and match_id == table.active:
            legal_path = fill(template.rsplit("/", 1)[0] + "/legal-actions", match_id, seat)
            if legal_path in {fill(t, match_id, seat) for t in contract()["paths"]}:
                actions = (
                    rec.json("get", legal_path, **who).get("actions") if who.get("token") else []
                )
                bodies += [{"body": a} for a in (actions or [])[:1]]
        for body in bodies:
            rec.send(method, path, **who, **body)
    for other in METHODS:
        if other not in contract()["paths"][template]:
            rec.send(other, fill(template, table.active if table else "", 0))


def sweep_conditions(rec: Recorder, table: Table) -> None:
    """Versions, idempotency, long polls and streams of the game's matches,
    on a match of their own (the sweep of every operation may have ended the
    table's: a resignation, an abort)."""
    fresh = create(rec, table.prefix)
    tokens = [seat["token"] for seat in fresh["seats"]]
    base = f"{table.prefix}/matches/{fresh['id']}"
    seen = rec.send("get", base, token=tokens[0])
    rec.send("get", base, token=tokens[0], headers={"If-None-Match": seen.headers["ETag"]})
    rec.send("get", base, headers={"If-None-Match": 'W/"999", "1"'})
    for who in (tokens[0], tokens[1]):
        actions = rec.json("get", f"{base}/legal-actions", token=who)["actions"]
        if not actions:
            continue
        rec.send(
            "post", f"{base}/actions", token=who, body=actions[0], headers={"If-Match": '"999999"'}
        )
        key = {"Idempotency-Key": f"sweep-{who[:6]}"}
        rec.send("post", f"{base}/actions", token=who, body=actions[0], headers=key)
        rec.send("post", f"{base}/actions", token=who, body=actions[0], headers=key)
        rec.send("post", f"{base}/actions", token=who, body={"type": "no_such"}, headers=key)
        rec.send("post", f"{base}/actions", token=who, body=actions[0], headers={"If-Match": "x"})
    rec.send("get", f"{base}/events", params={"after": 0, "wait": 0.1})
    rec.send("get", f"{base}/events", params={"after": 10**6, "wait": 0.2}, token=tokens[0])
    rec.send("get", f"{base}/stream", token=tokens[0])
    rec.send("get", f"{base}/stream", headers={"Last-Event-ID": "2"})
    rec.send("get", f"{base}/stream", headers={"Last-Event-ID": "x"})
    finished = f"{table.prefix}/matches/{table.finished}"
    rec.send("get", f"{finished}/stream")
    rec.send("get", f"{finished}/stream", token=table.finished_tokens[1])
    rec.send("get", f"{finished}/events", token=table.finished_tokens[1], params={"limit": 1000})


def sweep(rec: Recorder, with_tables: bool = True) -> None:
    """Every operation of the contract; without tables (no match can be made),
    those of the games' first only (the others' are made alike)."""
    tables = {p: set_table(rec, p) for p in game_prefixes()} if with_tables else {}
    for template, item in contract()["paths"].items():
        prefix = next((p for p in game_prefixes() if template.startswith(p + "/")), None)
        table = tables.get(prefix) if prefix else None
        if with_tables and prefix and table is None:
            continue
        if not with_tables and prefix and prefix != game_prefixes()[0]:
            continue
        if not with_tables and prefix:
            # no match can be created: aim at one that does not exist
            table = Table(prefix, UNKNOWN_MATCH, [WRONG_TOKEN] * 2, UNKNOWN_MATCH)
            table.finished, table.finished_tokens = UNKNOWN_MATCH, [WRONG_TOKEN] * 2
        for method in METHODS:
            if method in item:
                sweep_operation(rec, table, template, method)
    for table in tables.values():
        sweep_conditions(rec, table)


def report(rec: Recorder) -> None:
    found = [m for exchange in rec.exchanges for m in mismatches(exchange)]
    unique = sorted(set(found))
    assert not unique, f"{len(unique)} answers the contract does not document:\n" + "\n".join(
        unique[:60]
    )


@pytest.fixture(scope="module")
def swept(live) -> Recorder:
    rec = Recorder(live.base)
    sweep(rec)
    return rec


def test_every_answer_of_the_sweep_is_documented(swept):
    report(swept)
    statuses = {
        (e.method, operation(e.path, e.method)[0], e.status)
        for e in swept.exchanges
        if operation(e.path, e.method)
    }
    # the sweep reaches far: successes, refusals of every kind, conditional answers
    codes = {s for _, _, s in statuses}
    assert {200, 201, 304, 400, 401, 403, 404, 405, 409, 412, 413, 422} <= codes, codes


def test_every_operation_answers_429_as_documented(live_server):
    server = live_server(
        RATELIMIT_ENABLED=True, RATE_LIMIT_PER_ADDRESS="1/hour", RATE_LIMIT_PER_TOKEN="1/hour"
    )
    rec = Recorder(server.base)
    sweep(rec, with_tables=False)
    report(rec)
    assert sum(e.status == 429 for e in rec.exchanges) > len(rec.exchanges) * 0.9


def test_every_operation_answers_503_as_documented_when_the_store_is_down(live_server):
    server = live_server(REDIS_URL=STORE_DOWN)
    rec = Recorder(server.base, once=True)
    sweep(rec, with_tables=False)
    report(rec)
    assert any(e.status == 503 for e in rec.exchanges)


def test_the_sweep_fails_on_what_the_contract_does_not_say():
    path = f"/v1/games/dekal/matches/{UNKNOWN_MATCH}"
    problem = {
        "type": "https://ludotheque.dev/problems/match_not_found",
        "title": "Not Found",
        "status": 404,
        "detail": "no such match",
        "code": "match_not_found",
    }
    headers = {"Content-Type": "application/problem+json", "X-Request-ID": "r"}

    def exchange(status=404, extra_headers=None, body=problem, method="get"):
        raw = json.dumps(body).encode()
        all_headers = {**headers, **(extra_headers or {})}
        return Exchange(method, path, status, all_headers, "application/problem+json", raw)

    assert mismatches(exchange()) == []
    assert mismatches(exchange(status=418)), "an undocumented status"
    assert mismatches(exchange(extra_headers={"X-Secret": "1"})), "an undocumented header"
    assert mismatches(exchange(body={**problem, "hint": "x"})), "an undocumented member"
    assert mismatches(exchange(body={**problem, "code": "oops"})), "a code not in the enum"
    no_id = Exchange(
        "get",
        path,
        404,
        {"Content-Type": "application/problem+json"},
        "application/problem+json",
        json.dumps(problem).encode(),
    )
    assert mismatches(no_id), "a documented header missing"
    assert mismatches(exchange(method="put", status=404)), "an operation the contract lacks"
