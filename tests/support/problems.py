"""Errors as the contract writes them: RFC 9457 problems with a stable code."""

from __future__ import annotations

from typing import Any

import requests

PROBLEM_JSON = "application/problem+json"


def assert_problem(response: requests.Response, status: int, code: str) -> dict[str, Any]:
    """``response`` is the problem ``code`` with ``status``, complete (a type
    naming the code, a title, a detail); its body."""
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == PROBLEM_JSON
    body = response.json()
    assert body["code"] == code and body["status"] == status, body
    assert body["type"].endswith(code) and body["title"] and body["detail"], body
    return body
