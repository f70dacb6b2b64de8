"""How fast is the Gaudí engine's ``legal_actions``? (not a test)

Plays random games (uniformly random legal actions, every player count,
normal and beginner rules) and reports the worst ``legal_actions`` time and
the largest list seen::

    python -m bench.gaudi_legal --games 200
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, field

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


def report(label: str, record: Record) -> str:
    times = sorted(record.times_ms)
    p99 = times[int(len(times) * 0.99)]
    return (
        f"{label}: {len(times)} calls, mean {statistics.fmean(times):.2f} ms, "
        f"p99 {p99:.2f} ms, worst {record.worst_ms:.2f} ms ({record.worst_size} actions); "
        f"largest list {record.largest} actions ({record.largest_ms:.2f} ms)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per rule set")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for beginner in (False, True):
        record = Record()
        for i in range(args.games):
            n_players = 2 + i % (GAME.max_players - 1)
            play(args.seed + i, n_players, beginner, record)
        label = "beginner rules" if beginner else "standard rules"
        sys.stdout.write(report(f"{label}, {args.games} games", record) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
