"""Refusals: the one error type of the service, with an HTTP status and a
stable ``code`` (docs/clients/api.md). Raised anywhere; ``service.http.errors``
alone turns them into ``application/problem+json`` answers."""

from __future__ import annotations

from typing import Any

from engines.core import IllegalAction

# Engine refusals that are about turn order rather than the move itself.
CONFLICT_CODES = {"not_your_turn"}


class Problem(Exception):
    """An error answer: HTTP status, stable code, human detail, extra members."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def from_illegal_action(refused: IllegalAction) -> Problem:
    status = 409 if refused.code in CONFLICT_CODES else 422
    return Problem(status, refused.code, refused.message)
