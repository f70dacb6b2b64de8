"""Engine speed: random playouts per second and legal-actions latency, every
registered game at its smallest and largest player count (not a test).

Each playout starts from a fresh seeded match with the game's default
options plus its ``arena_options`` (what keeps a match between bots bounded:
Ducale's stock is rebuilt at most 3 times a round, where the default, the
rulebook's, lets random play go on for hundreds of thousands of actions) and
plays uniformly random legal actions to the end; every call to
``legal_actions``, ``apply`` and ``view`` (the acting seat's, as the service
answers each action with it) is timed. No Flask, no Redis. The figures go
to ``bench/results/engines.json`` (``bench.results``)::

    python -m bench.engines --seconds 4
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import results
from engines import GAMES
from engines.core import Game


@dataclass
class Timings:
    legal: list[float] = field(default_factory=list)
    apply: list[float] = field(default_factory=list)
    view: list[float] = field(default_factory=list)
    playouts: int = 0
    actions: int = 0
    seconds: float = 0.0


# A bounded game ends long before: a playout this long is a bug to report,
# not a benchmark to wait for.
MAX_ACTIONS = 200_000


def playout(game: Game, players: int, seed: int, timings: Timings) -> None:
    """One random match to the end, every engine call timed."""
    rng = random.Random(seed)
    options = game.options_schema().load(getattr(game, "arena_options", {}))
    state = game.setup(options, players, seed)
    clock = time.perf_counter
    for _ in range(MAX_ACTIONS):
        if not (seats := game.to_act(state)):
            break
        seat = rng.choice(seats)
        start = clock()
        actions = game.legal_actions(state, seat)
        middle = clock()
        game.apply(state, seat, rng.choice(actions))
        end = clock()
        game.view(state, seat)
        timings.view.append(clock() - end)
        timings.legal.append(middle - start)
        timings.apply.append(end - middle)
        timings.actions += 1
    else:
        raise RuntimeError(
            f"{game.name} at {players} seats, seed {seed}: no end in {MAX_ACTIONS} actions"
        )
    timings.playouts += 1


def measure(game: Game, players: int, budget: float) -> Timings:
    """Playouts until ``budget`` seconds of this process's CPU time have
    passed (at least one): other work on a shared machine then slows the
    run down but moves the rates little. Each call is timed by the wall
    clock (a CPU clock costs a microsecond a read, as much as some calls)."""
    timings = Timings()
    start = time.process_time()
    seed = 0
    while True:
        playout(game, players, seed, timings)
        seed += 1
        timings.seconds = time.process_time() - start
        if timings.seconds >= budget:
            return timings


def percentile_ms(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000, 3)


def summary(t: Timings) -> dict[str, Any]:
    return {
        "playouts": t.playouts,
        "playouts_per_s": round(t.playouts / t.seconds, 2),
        "actions_per_playout": round(t.actions / t.playouts, 1),
        "actions_per_s": round(t.actions / t.seconds, 1),
        "legal_actions_ms": {
            "p50": percentile_ms(t.legal, 0.5),
            "p99": percentile_ms(t.legal, 0.99),
            "max": percentile_ms(t.legal, 1.0),
        },
        "apply_ms_p99": percentile_ms(t.apply, 0.99),
        "view_ms_p99": percentile_ms(t.view, 0.99),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=2.0, help="CPU seconds per game and player count"
    )
    parser.add_argument("--games", default=",".join(sorted(GAMES)), help="comma-separated")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv
    names = [name for name in args.games.split(",") if name]
    if unknown := set(names) - set(GAMES):
        parser.error(f"unknown games: {sorted(unknown)}")

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    out(
        f"Engines, Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"{args.seconds:g} s of CPU per game and player count, default and arena options"
    )
    out(
        f"  {'game':7} {'seats':>5} {'playouts/s':>10} {'actions':>8} {'actions/s':>10} "
        f"{'legal p50':>9} {'legal p99':>9} {'legal max':>9} {'apply p99':>9} {'view p99':>9}"
    )
    by_game: dict[str, dict[str, Any]] = {}
    for name in names:
        game = GAMES[name]
        for players in sorted({game.min_players, game.max_players}):
            s = summary(measure(game, players, args.seconds))
            by_game.setdefault(name, {})[str(players)] = s
            legal = s["legal_actions_ms"]
            out(
                f"  {name:7} {players:5d} {s['playouts_per_s']:10.2f} "
                f"{s['actions_per_playout']:8.1f} {s['actions_per_s']:10.0f} "
                f"{legal['p50']:9.3f} {legal['p99']:9.3f} {legal['max']:9.3f} "
                f"{s['apply_ms_p99']:9.3f} {s['view_ms_p99']:9.3f}"
            )
    out("  (rates per second of CPU; times in ms)")
    if args.json:
        figures = {"cpu_seconds_per_case": args.seconds, "games": by_game}
        out(f"wrote {results.write(args.json, 'engines', argv, figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("engines")))
