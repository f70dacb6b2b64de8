"""A small HTTP client for the tests: one method per endpoint."""

from __future__ import annotations

from typing import Any

import requests


class ApiClient:
    def __init__(self, base: str, http: requests.Session | None = None) -> None:
        self.base = base
        self.http = http or requests.Session()

    @staticmethod
    def _auth(token: str | None, headers: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(headers or {})
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def create(self, game: str, body: dict[str, Any]) -> requests.Response:
        return self.http.post(f"{self.base}/v1/games/{game}/matches", json=body)

    def join(self, game: str, match_id: str, seat: int, name: str) -> requests.Response:
        return self.http.post(
            f"{self.base}/v1/games/{game}/matches/{match_id}/seats/{seat}", json={"name": name}
        )

    def get(
        self, game: str, match_id: str, token: str | None = None, **headers: str
    ) -> requests.Response:
        return self.http.get(
            f"{self.base}/v1/games/{game}/matches/{match_id}", headers=self._auth(token, headers)
        )

    def legal(self, game: str, match_id: str, token: str | None) -> requests.Response:
        return self.http.get(
            f"{self.base}/v1/games/{game}/matches/{match_id}/legal-actions",
            headers=self._auth(token),
        )

    def act(
        self, game: str, match_id: str, token: str | None, action: Any, **headers: str
    ) -> requests.Response:
        return self.http.post(
            f"{self.base}/v1/games/{game}/matches/{match_id}/actions",
            json=action,
            headers=self._auth(token, {k.replace("_", "-"): v for k, v in headers.items()}),
        )

    def events(
        self, game: str, match_id: str, token: str | None = None, after: int = 0
    ) -> requests.Response:
        return self.http.get(
            f"{self.base}/v1/games/{game}/matches/{match_id}/events",
            params={"after": after},
            headers=self._auth(token),
        )

    # -- a match's life around its play ------------------------------------------
    def _post(self, game: str, match_id: str, what: str, token: str | None) -> requests.Response:
        return self.http.post(
            f"{self.base}/v1/games/{game}/matches/{match_id}/{what}", headers=self._auth(token)
        )

    def leave(self, game: str, match_id: str, seat: int, token: str | None) -> requests.Response:
        return self.http.delete(
            f"{self.base}/v1/games/{game}/matches/{match_id}/seats/{seat}",
            headers=self._auth(token),
        )

    def resign(self, game: str, match_id: str, token: str | None) -> requests.Response:
        return self._post(game, match_id, "resign", token)

    def abort(self, game: str, match_id: str, token: str | None) -> requests.Response:
        return self._post(game, match_id, "abort", token)

    def rematch(self, game: str, match_id: str, token: str | None) -> requests.Response:
        return self._post(game, match_id, "rematch", token)

    def lobby(self, game: str, **params: Any) -> requests.Response:
        return self.http.get(f"{self.base}/v1/games/{game}/matches", params=params)
