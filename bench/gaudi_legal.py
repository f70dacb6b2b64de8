"""How fast is the Gaudí engine's ``legal_actions``? (not a test)

Plays random games (uniformly random legal actions, every player count,
normal and beginner rules) and reports the worst ``legal_actions`` time and
the largest list seen; the figures go to ``bench/results/gaudi_legal.json``
(``bench.results``)::

    python -m bench.gaudi_legal --games 200
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import results
from engines.gaudi import GAME


@dataclass
class Record:
    times_ms: list[float] = field(default_factory=list)
    worst_ms: float = 0.0
    worst_size: int = 0
    largest: int = 0
    largest_ms: float = 0.0

    def add(self, ms: float, size: int) -> None:
        self.times_ms.append(ms)
        if ms > self.worst_ms:
            self.worst_ms, self.worst_size = ms, size
        if size > self.largest:
            self.largest, self.largest_ms = size, ms


def play(seed: int, n_players: int, beginner: bool, record: Record) -> None:
    """One random game, timing every legal_actions call."""
    rng = random.Random(seed)
    options = GAME.options_schema().load({"beginner": beginner})
    state = GAME.setup(options, n_players, seed)
    while seats := GAME.to_act(state):
        seat = seats[0]
        start = time.process_time()
        actions = GAME.legal_actions(state, seat)
        record.add((time.process_time() - start) * 1000, len(actions))
        GAME.apply(state, seat, rng.choice(actions))


def summary(record: Record) -> dict[str, Any]:
    times = sorted(record.times_ms)
    return {
        "calls": len(times),
        "mean_ms": round(statistics.fmean(times), 3),
        "p99_ms": round(times[int(len(times) * 0.99)], 3),
        "worst_ms": round(record.worst_ms, 3),
        "worst_actions": record.worst_size,
        "largest_list": record.largest,
        "largest_list_ms": round(record.largest_ms, 3),
    }


def report(label: str, s: dict[str, Any]) -> str:
    return (
        f"{label}: {s['calls']} calls, mean {s['mean_ms']:.2f} ms, "
        f"p99 {s['p99_ms']:.2f} ms, worst {s['worst_ms']:.2f} ms ({s['worst_actions']} actions); "
        f"largest list {s['largest_list']} actions ({s['largest_list_ms']:.2f} ms)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per rule set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    figures: dict[str, Any] = {"games_per_rule_set": args.games}
    for beginner in (False, True):
        record = Record()
        for i in range(args.games):
            n_players = 2 + i % (GAME.max_players - 1)
            play(args.seed + i, n_players, beginner, record)
        label = "beginner" if beginner else "standard"
        figures[label] = summary(record)
        sys.stdout.write(report(f"{label} rules, {args.games} games", figures[label]) + "\n")
    if args.json:
        sys.stdout.write(f"wrote {results.write(args.json, 'gaudi_legal', argv, figures)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("gaudi_legal")))
