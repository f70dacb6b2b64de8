"""Bot fairness benchmark: does a flood of bot-only matches delay another
client's bots? (Not a test; loopback only, bounded in time.)

Starts a Redis (``$REDIS_URL`` if it is a loopback one, else a private
server) and ``ludotheque serve`` on a free loopback port, then:

1. the *victim* (one address) creates a Dékal match of one person against a
   ``random`` bot and plays it: whenever its seat is to act it plays a random
   legal action at once (with ``If-Match``), and otherwise polls the match
   every ``--poll-ms``;
2. at the same moment the *attacker* (another address) creates ``--attack``
   Dékal matches of six ``mcts`` bots to 1,000 points, all at once (one
   thread per request), as in issue 15;
3. for ``--seconds`` it measures the delay of each of the victim's bot
   moves: from the moment the victim sees the bot owe a move (in a view, or
   in the answer to its own action) to the moment it sees the match move on
   without it. A move still owed when the time is up counts with the time
   it has waited so far (it is then marked ``censored``).

The two clients differ by address: the server is started with
``LUDOTHEQUE_TRUSTED_PROXIES=1`` and each client sends its own
``X-Forwarded-For``. Rate limits are off (they are not what is measured).
It prints the delays' count, p50, p99 and max, and what the attacker's
requests got, and writes them to ``bench/results/bots.json``
(``bench.results``; ``--json PATH`` elsewhere)::

    python -m bench.bots                     # the attack, 60 s
    python -m bench.bots --attack 0          # the victim alone
    python -m bench.bots --serve-arg=--bot-workers=2 --env LUDOTHEQUE_BOT_SEATS_PER_ADDRESS=0
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import requests

from bench import results
from bench.load import answering, redis_server, stop
from service.store.embedded import free_port

ROOT = Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"
GAME = "dekal"
VICTIM = "203.0.113.9"
ATTACKER = "198.51.100.7"
ATTACK_BODY = {"players": [{"bot": "mcts"}] * 6, "options": {"target_score": 1000}}


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


@contextlib.contextmanager
def serving(port: int, env: dict[str, str], serve_args: list[str], log: Path) -> Iterator[None]:
    command = [sys.executable, "-m", "service.cli", "serve", "--port", str(port), *serve_args]
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=output, stderr=output, start_new_session=True
        )
    try:
        answering(process, command, f"http://{HOST}:{port}/readyz", log)
        time.sleep(1)  # the bot workers start beside gunicorn
        yield
    finally:
        stop(process)


def attack(base: str, count: int, answers: Counter) -> None:
    """``count`` bot-only matches created at once, one thread each."""

    def create() -> None:
        try:
            answer = requests.post(
                f"{base}/v1/games/{GAME}/matches",
                json=ATTACK_BODY,
                headers={"X-Forwarded-For": ATTACKER},
                timeout=30,
            )
            key = str(answer.status_code)
            if answer.status_code >= 400:
                key += " " + answer.json().get("code", "")
            answers[key] += 1
        except requests.RequestException as failed:
            answers[type(failed).__name__] += 1

    threads = [threading.Thread(target=create) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class Victim:
    """One person against a ``random`` bot, measuring how long the bot takes."""

    def __init__(self, base: str, poll_s: float) -> None:
        self.base = base
        self.poll_s = poll_s
        self.http = requests.Session()
        self.http.headers["X-Forwarded-For"] = VICTIM
        self.rng = random.Random(7)
        self.delays: list[float] = []
        self.owed_at: list[float] = []  # when each delay began, from the start
        self.censored = 0
        self.matches = 0

    def new_match(self) -> tuple[str, dict[str, Any]]:
        body = {"players": [{"name": "victim"}, {"bot": "random"}]}
        created = self.http.post(f"{self.base}/v1/games/{GAME}/matches", json=body, timeout=10)
        if created.status_code != 201:
            raise SystemExit(f"the victim's match was refused: {created.text}")
        self.matches += 1
        match = created.json()
        self.url = f"{self.base}/v1/games/{GAME}/matches/{match['id']}"
        self.http.headers["Authorization"] = f"Bearer {match['seats'][0]['token']}"
        return match["id"], match

    def run(self, seconds: float) -> None:
        self.started = time.monotonic()
        end = self.started + seconds
        _, match = self.new_match()
        owed_since: float | None = None
        owed_version = -1
        while time.monotonic() < end:
            now = time.monotonic()
            if owed_since is not None and match["version"] != owed_version:
                self.record(owed_since, now)  # the match moved on without us
                owed_since = None
            if match["status"] == "finished":
                _, match = self.new_match()
                owed_since = None
                continue
            if owed_since is None and 1 in match["to_act"]:
                owed_since, owed_version = now, match["version"]
            if 0 in match["to_act"]:
                match = self.act(match)
                if owed_since is not None and match.get("_ours"):
                    owed_version = match["version"]  # our move, not the bot's
                continue
            time.sleep(self.poll_s)
            match = self.http.get(self.url, timeout=10).json()
        if owed_since is not None:
            self.record(owed_since, time.monotonic())
            self.censored += 1

    def record(self, owed_since: float, moved: float) -> None:
        self.delays.append(moved - owed_since)
        self.owed_at.append(owed_since - self.started)

    def act(self, match: dict[str, Any]) -> dict[str, Any]:
        legal = self.http.get(self.url + "/legal-actions", timeout=10).json()
        if legal["version"] != match["version"] or not legal["actions"]:
            return self.http.get(self.url, timeout=10).json()
        action = self.rng.choice(legal["actions"])
        played = self.http.post(
            self.url + "/actions",
            json=action,
            headers={"If-Match": str(match["version"])},
            timeout=10,
        )
        if played.status_code == 200:
            return {**played.json(), "_ours": True}
        return self.http.get(self.url, timeout=10).json()  # the bot moved first (412)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long to measure")
    parser.add_argument("--attack", type=int, default=30, help="bot-only matches to create")
    parser.add_argument("--poll-ms", type=float, default=20, help="the victim's polling period")
    parser.add_argument(
        "--serve-arg", action="append", default=[], help="an argument for `ludotheque serve`"
    )
    parser.add_argument(
        "--env", action="append", default=[], help="NAME=VALUE for the server's environment"
    )
    parser.add_argument("--json", type=Path, help="write the figures there")
    parser.add_argument("--log", type=Path, help="keep the server's output there")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    if not 0 < args.seconds <= 600:
        parser.error("--seconds: 0 to 600")
    if not 0 <= args.attack <= 200:
        parser.error("--attack: 0 to 200")

    port = free_port()
    base = f"http://{HOST}:{port}"
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-bots-")))
        redis_url = stack.enter_context(redis_server(folder / "redis"))
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "LUDOTHEQUE_TRUSTED_PROXIES": "1",
            "LUDOTHEQUE_RATE_LIMITS": "0",
        }
        env.update(item.split("=", 1) for item in args.env)
        stack.enter_context(serving(port, env, args.serve_arg, folder / "serve.log"))
        victim = Victim(base, args.poll_ms / 1000)
        answers: Counter = Counter()
        attacker = threading.Thread(target=attack, args=(base, args.attack, answers))
        started = time.monotonic()
        attacker.start()
        victim.run(args.seconds)
        attacker.join()
        elapsed = time.monotonic() - started
        if args.log:
            shutil.copyfile(folder / "serve.log", args.log)
    delays = victim.delays
    figures = {
        "seconds": round(elapsed, 1),
        "attack": args.attack,
        "attack_answers": dict(answers),
        "serve_args": args.serve_arg,
        "env": args.env,
        "victim_matches": victim.matches,
        "bot_moves": len(delays),
        "censored": victim.censored,
        "p50_s": round(percentile(delays, 50), 3) if delays else None,
        "p99_s": round(percentile(delays, 99), 3) if delays else None,
        "max_s": round(max(delays), 3) if delays else None,
        "slowest": [
            {"owed_at_s": round(at, 1), "delay_s": round(delay, 3)}
            for delay, at in sorted(zip(delays, victim.owed_at, strict=True), reverse=True)[:5]
        ],
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        print(f"wrote {results.write(args.json, 'bots', argv, figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("bots")))
