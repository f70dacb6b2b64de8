"""Pacal solitaire statistics: completion and win rates, mean score of two policies.

    python -m bench.pacal_solitaire --games 10000

The figures go to ``bench/results/pacal_solitaire.json`` (``bench.results``).

Each game ``i`` is dealt with seed ``first_seed + i`` and played through the
engine itself (``legal_actions`` and ``apply``), so the figures are those of
the rules as served: a drawn card that fits an empty slot must be placed, and
only a perfect pyramid of 10 cards wins. The score is the number of cards
drawn to complete the pyramid, so the mean score is over completed games.

- ``random``: a uniformly random legal action (any slot where the card fits;
  set aside only when it fits none, the one case the rules allow it).
- ``proportional``: place every card that fits, on the empty slot of its gap
  that its value suits best: between the visible values ``hi`` above and
  ``lo`` below, with ``k`` empty slots in that gap, a card ``c`` goes on the
  ``floor((hi - c) / (hi - lo) * k)``-th of them. Set aside only cards that
  fit nowhere.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bench import results
from engines.core import Action, State
from engines.pacal import GAME
from engines.pacal.rules import N_CARDS, N_SLOTS

Policy = Callable[[State, list[Action], random.Random], Action]


def random_policy(state: State, actions: list[Action], rng: random.Random) -> Action:
    """Any legal action, uniformly."""
    return rng.choice(actions)


def proportional_policy(state: State, actions: list[Action], rng: random.Random) -> Action:
    """Place the card where its value suits its gap best; never waste a card."""
    slots = [action["slot"] for action in actions if action["type"] == "place"]
    if not slots:
        return {"type": "discard"}  # the only legal action then
    pyramid = state["pyramids"][0]
    # The legal empty slots of a card are exactly the empty slots of its gap.
    above = [pyramid[s][-1] for s in range(slots[0]) if pyramid[s]]
    below = [pyramid[s][-1] for s in range(slots[-1] + 1, N_SLOTS) if pyramid[s]]
    hi = above[-1] if above else N_CARDS + 1
    lo = below[0] if below else 0
    index = int((hi - state["drawn"]) / (hi - lo) * len(slots))
    return {"type": "place", "slot": slots[min(index, len(slots) - 1)]}


POLICIES: dict[str, Policy] = {"random": random_policy, "proportional": proportional_policy}


def play(policy: Policy, seed: int) -> dict[str, Any]:
    """One solitaire dealt with ``seed``; its outcome."""
    state = GAME.setup(GAME.options_schema().load({"mode": "solitaire"}), 1, seed)
    rng = random.Random(seed)
    while GAME.to_act(state):
        GAME.apply(state, 0, policy(state, GAME.legal_actions(state, 0), rng))
    outcome = GAME.outcome(state)
    assert outcome is not None
    return outcome


def summarise(outcomes: list[dict[str, Any]]) -> dict[str, float | int | None]:
    scores = [outcome["score"] for outcome in outcomes if outcome["completed"]]
    return {
        "games": len(outcomes),
        "win_rate": sum(outcome["won"] for outcome in outcomes) / len(outcomes),
        "completion_rate": len(scores) / len(outcomes),
        "mean_score": statistics.fmean(scores) if scores else None,
        "median_score": statistics.median(scores) if scores else None,
        "best_score": min(scores) if scores else None,
        "mean_filled": statistics.fmean(outcome["filled"] for outcome in outcomes),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10_000, help="games per policy")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--policy", choices=sorted(POLICIES), action="append")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    figures: dict[str, Any] = {}
    for name in args.policy or list(POLICIES):
        started = time.perf_counter()
        seeds = range(args.first_seed, args.first_seed + args.games)
        stats = figures[name] = summarise([play(POLICIES[name], seed) for seed in seeds])
        mean = "n/a" if stats["mean_score"] is None else f"{stats['mean_score']:.2f}"
        print(
            f"{name:>12}: {stats['games']} games, won (10 cards) {stats['win_rate']:.2%}, "
            f"completed {stats['completion_rate']:.2%}, "
            f"mean score {mean} cards (median {stats['median_score']}, "
            f"best {stats['best_score']}), "
            f"mean filled slots {stats['mean_filled']:.2f}, "
            f"{time.perf_counter() - started:.1f}s"
        )
    if args.json:
        print(f"wrote {results.write(args.json, 'pacal_solitaire', argv, figures)}")


if __name__ == "__main__":
    main(results.command_line("pacal_solitaire"))
