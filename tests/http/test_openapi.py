"""The committed contract is what the app serves, and it is valid OpenAPI."""

from __future__ import annotations

import json
from pathlib import Path

from openapi_spec_validator import validate

from engines import GAMES
from service.cli import spec_text

COMMITTED = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


def test_committed_contract_is_what_the_app_serves(live):
    served = live.http.get(live.url("/openapi.json")).json()
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert committed == served, "run `ludotheque openapi` and commit openapi/openapi.json"
    assert COMMITTED.read_text(encoding="utf-8") == spec_text() + "\n"


def test_contract_is_valid_openapi():
    validate(json.loads(COMMITTED.read_text(encoding="utf-8")))


def test_every_game_has_concrete_action_and_view_schemas():
    spec = json.loads(COMMITTED.read_text(encoding="utf-8"))
    schemas = spec["components"]["schemas"]
    for name, game in GAMES.items():
        prefix = name.capitalize()
        action = schemas[f"{prefix}Action"]
        assert action["discriminator"]["propertyName"] == "type"
        assert set(action["discriminator"]["mapping"]) == set(game.action_schemas)
        for ref in action["oneOf"]:
            concrete = schemas[ref["$ref"].rsplit("/", 1)[1]]
            assert "type" in concrete["properties"] and "type" in concrete["required"]
        match = schemas[f"{prefix}Match"]
        view_ref = match["properties"]["view"]
        assert "DekalView" in json.dumps(view_ref) if name == "dekal" else view_ref
        path = spec["paths"][f"/v1/games/{name}/matches/{{match_id}}/actions"]["post"]
        body = path["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{prefix}Action"}


def test_interactive_docs_are_served(live):
    page = live.http.get(live.url("/docs"))
    assert page.status_code == 200 and "swagger" in page.text.lower()
