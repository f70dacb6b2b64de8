"""The seat token a request carries, in its ``Authorization`` header."""

from __future__ import annotations

from service.domain.problems import Problem
from service.http.caching import request_header


def bearer_token() -> str | None:
    """The bearer token of the current request, None when there is none.

    A malformed Authorization header is an error, not an anonymous request:
    a client that meant to authenticate must not silently get a spectator view.
    """
    header = request_header("Authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Problem(
            401,
            "token_required",
            "use 'Authorization: Bearer <seat token>'",
            headers={"WWW-Authenticate": 'Bearer realm="ludotheque"'},
        )
    return token
