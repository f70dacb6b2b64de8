"""What a request costs with a player token against a seat token (issue 36,
point 9), in process, the request path alone (not a benchmark of a match).

The app (``create_app``, on a private Redis and a SQLite database in a
temporary folder) serves one Dékal match whose seat 0 is held by a seat
token and another whose seat 0 is held by an app's player. Rounds alternate
the two: each asks ``--requests`` times for the seat's view with its legal
actions (``GET ...?legal_actions=true``) through Flask's test client, and
measures this process's CPU per request. A player token is checked in
process after its first request (``service.store.players.TokenCache``), so
what remains is the resolution hook and the app's quota lookup::

    python -m bench.players --rounds 5 --requests 2000

It prints the best and median CPU µs per request of each, and their ratio,
and writes them to ``bench/results/players.json`` (``--json PATH``).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import results
from bench.load import redis_server
from service.app import create_app
from service.store.database import migrate


def per_request(client: Any, url: str, token: str, requests: int) -> float:
    headers = {"Authorization": f"Bearer {token}"}
    started = time.process_time()
    for _ in range(requests):
        answer = client.get(url, headers=headers)
        assert answer.status_code == 200, answer.get_data(as_text=True)
    return (time.process_time() - started) / requests * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--json", type=Path, default=results.default_path("players"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ludotheque-players-") as tmp:
        database = f"sqlite:///{Path(tmp) / 'players.db'}"
        migrate(database)
        with redis_server(Path(tmp) / "redis") as redis_url:
            app = create_app({"REDIS_URL": redis_url, "DATABASE_URL": database})
            client = app.test_client()
            _, key = app.extensions["ludotheque.players"].create_app("bench")
            player = client.post(
                "/v1/apps/me/players",
                json={"external_id": "bench", "name": "Ada"},
                headers={"Authorization": f"Bearer {key}"},
            ).get_json()
            held = client.post(
                "/v1/games/dekal/matches",
                json={"players": [{"player": player["id"]}, {"name": "Bob"}]},
                headers={"Authorization": f"Bearer {key}"},
            ).get_json()
            seated = client.post(
                "/v1/games/dekal/matches", json={"players": [{"name": "Ada"}, {"name": "Bob"}]}
            ).get_json()
            runs = {
                "seat": (f"/v1/games/dekal/matches/{seated['id']}", seated["seats"][0]["token"]),
                "player": (f"/v1/games/dekal/matches/{held['id']}", player["token"]),
            }
            cpu: dict[str, list[float]] = {"seat": [], "player": []}
            for _ in range(args.rounds):
                for name, (url, token) in runs.items():
                    cpu[name].append(
                        per_request(client, url + "?legal_actions=true", token, args.requests)
                    )
    figures = {
        name: {"best_us": round(min(v), 1), "median_us": round(statistics.median(v), 1)}
        for name, v in cpu.items()
    }
    figures["player_vs_seat"] = {
        "best": round(figures["player"]["best_us"] / figures["seat"]["best_us"], 3),
        "median": round(figures["player"]["median_us"] / figures["seat"]["median_us"], 3),
    }
    for name in ("seat", "player"):
        print(
            f"{name:>6}: CPU per request best {figures[name]['best_us']} µs, "
            f"median {figures[name]['median_us']} µs"
        )
    print(
        f"player / seat: best {figures['player_vs_seat']['best']}, "
        f"median {figures['player_vs_seat']['median']}"
    )
    results.write(args.json, "players", results.command_line("players"), figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
