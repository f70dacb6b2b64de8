"""Cards, tiles and the other values that pass from a view into an action are
one named component each, referenced everywhere: a generated client has one
``DucaleCard`` type, not one per place a card appears."""

from __future__ import annotations

import json

from tests.contract.conformance import contract

NAMED = ["DucaleCard", "DucaleRealCard", "DucaleMeldId", "GaudiTile", "PacalCard", "PacalSlot",
         "DekalValue", "DekalDirection"]  # fmt: skip


def walk(node, found):
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            walk(value, found)
    elif isinstance(node, list):
        for value in node:
            walk(value, found)
    return found


def test_each_value_type_is_defined_once_and_referenced():
    schemas = contract()["components"]["schemas"]
    text = json.dumps(contract())
    nodes = walk(contract(), [])
    for name in NAMED:
        body = schemas[name]
        copies = [n for n in nodes if n == body]
        if "enum" in body or "maximum" in body:  # (a bare "integer >= 0" is common)
            assert len(copies) == 1, f"{name} is written out {len(copies)} times"
        if "enum" in body:
            assert text.count(json.dumps(body["enum"])) == 1, f"{name}'s values repeated inline"
        assert text.count(f'"#/components/schemas/{name}"') >= 2, f"{name} is used once or less"


def test_a_nullable_value_is_any_of_its_reference_and_null():
    must_use = contract()["components"]["schemas"]["DucaleView"]["properties"]["must_use"]
    assert must_use["anyOf"] == [{"$ref": "#/components/schemas/DucaleCard"}, {"type": "null"}]
