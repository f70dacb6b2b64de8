"""The contract's error code enum names every code the server answers with."""

from __future__ import annotations

import re
from pathlib import Path

from service.http.errors import CODES, HTTP_CODES
from tests.contract.conformance import contract
from tests.support.client import ApiClient
from tests.support.problems import assert_problem

ROOT = Path(__file__).resolve().parents[2]
RAISED = re.compile(r"(?:Problem\(\s*\d+,|IllegalAction\()\s*\"([a-z_]+)\"")


def test_every_code_the_source_raises_is_in_the_enum():
    raised = {
        code
        for folder in ("service", "engines")
        for path in (ROOT / folder).rglob("*.py")
        for code in RAISED.findall(path.read_text(encoding="utf-8"))
    }
    assert len(raised) > 10
    assert raised | set(HTTP_CODES.values()) <= set(CODES), raised - set(CODES)


def test_the_contract_lists_the_codes_as_an_enum():
    problem = contract()["components"]["schemas"]["Problem"]
    assert problem["properties"]["code"]["enum"] == CODES
    assert problem["additionalProperties"] is False
    assert "version" in problem["properties"]
    assert "version" in contract()["components"]["schemas"]["VersionMismatchProblem"]["required"]


def test_a_412_from_a_lost_race_names_the_version(live, live_server):
    """Process A judges an action on the match as it remembers it (version 1);
    process B wrote version 2 meanwhile: A's write loses, and its 412 says
    which version the match is at."""
    other = live_server()
    a, b = ApiClient(live.base), ApiClient(other.base)
    created = a.create("dekal", {"players": [{"name": "A"}, {"name": "B"}], "seed": 3}).json()
    first, second = (s["token"] for s in created["seats"])
    assert a.get("dekal", created["id"], first).json()["version"] == 1  # A remembers v1
    reveal = {"type": "reveal", "row": 0, "col": 0}
    assert b.act("dekal", created["id"], second, reveal).status_code == 200  # v2, by B
    lost = a.act("dekal", created["id"], first, reveal, If_Match='"1"')
    body = assert_problem(lost, 412, "version_mismatch")
    assert body["version"] == 2
