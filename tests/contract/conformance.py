"""The committed contract as a validator: a JSON Schema of any component, and
the operation a request matched, with what it documents."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

CONTRACT = Path(__file__).resolve().parents[2] / "openapi" / "openapi.json"


@functools.cache
def contract() -> dict[str, Any]:
    return json.loads(CONTRACT.read_text(encoding="utf-8"))


@functools.cache
def _registry() -> Registry:
    return Registry().with_resource("urn:contract", Resource.opaque(contract()))


@functools.cache
def validator(ref: str) -> Draft202012Validator:
    """A validator of ``ref`` (``#/components/schemas/X``) against the contract."""
    return Draft202012Validator({"$ref": f"urn:contract{ref}"}, registry=_registry())


def component(name: str) -> str:
    return f"#/components/schemas/{name}"


def errors(ref: str, instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator(ref).iter_errors(instance)
    ]


@functools.cache
def _routes() -> list[tuple[re.Pattern[str], str]]:
    routes = []
    for template in contract()["paths"]:
        pattern = re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(template))
        routes.append((re.compile(f"^{pattern}$"), template))
    # the most literal template first (/matches before /matches/{id})
    return sorted(routes, key=lambda r: r[1].count("{"))


def operation(path: str, method: str) -> tuple[str, dict[str, Any]] | None:
    """The contract's operation for this request (path template, operation), if any."""
    for pattern, template in _routes():
        if pattern.match(path):
            item = contract()["paths"][template]
            found = item.get(method.lower())
            return (template, found) if found else (template, {})
    return None


@functools.cache
def fast_validator(name: str) -> Any:
    """A compiled validator (jsonschema-rs) of component ``name``: for many instances."""
    import jsonschema_rs

    root = {"$ref": component(name), "components": contract()["components"]}
    return jsonschema_rs.Draft202012Validator(root)
