"""The arena: policies play whole matches in-process, and we count the wins.

``run`` is what ``ludotheque arena`` calls; ``python -m engines.ai.arena
--game dekal --seats mcts,random --games 200 --budget-ms 100`` does the same
from a shell and prints win rates with 95% Wilson confidence intervals
(``--json``: the raw counts). ``--iterations N`` also caps each mcts move at
N search iterations: with a budget large enough never to be the limit, the
result no longer depends on how busy the machine is. ``--jobs J`` plays the
matches in J processes; every match draws its seeds from ``--seed`` and its
index alone, so the result is the same whatever J.

Seat order rotates from one match to the next (match ``g`` puts
``seats[g % n]`` in seat 0, and so on), so that no policy always sits first.
A match counts as a win for a policy when it is the only policy among the
winners; a victory shared between different policies is a draw; a match
without winners (a solitaire not won) is counted in ``no_winner``.

Matches between bots must end: a game whose rules let a match run without
bound (Ducale's stock, rebuilt as often as needed) names, in its engine
object's optional ``arena_options``, the options that bound it; the arena
plays with them unless ``--options`` says otherwise (``match_options``).
"""

from __future__ import annotations

import argparse
import logging
import math
import random
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import nullcontext
from typing import Any

import orjson

from engines import get_game
from engines.ai import POLICIES, choose_action
from engines.core import Game, State

log = logging.getLogger(__name__)

Z_95 = 1.959963984540054


def run(
    game_name: str,
    seats: list[str],
    games: int,
    budget_ms: int,
    seed: int,
    options: dict | None = None,
    iterations: int | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """Play ``games`` matches between the policies in ``seats`` (one per seat).

    Returns ``{"games", "wins": {policy: count}, "draws", "no_winner",
    "seats", "budget_ms", "iterations", "seed", "seconds", "moves"}``;
    ``moves`` counts the decisions each policy took.
    """
    game = get_game(game_name)
    unknown = [policy for policy in seats if policy not in POLICIES]
    if unknown:
        raise ValueError(f"unknown policies {unknown}; expected some of {', '.join(POLICIES)}")
    if not game.min_players <= len(seats) <= game.max_players:
        raise ValueError(
            f"{game.title} is played by {game.min_players} to {game.max_players} seats"
        )
    match_options(game, options)  # a bad option fails here, not in a worker
    wins = dict.fromkeys(seats, 0)
    moves = dict.fromkeys(seats, 0)
    draws = no_winner = 0
    started = time.perf_counter()
    matches = [
        (game_name, seats, index, budget_ms, seed, options, iterations) for index in range(games)
    ]
    with ProcessPoolExecutor(jobs) if jobs > 1 else nullcontext() as pool:
        # Counted as each match ends (in order), so a long run logs its progress.
        results = pool.map(_one_match, matches) if pool else map(_one_match, matches)
        for index, (winners, played) in enumerate(results):
            for policy, count in played.items():
                moves[policy] += count
            if len(winners) == 1:
                wins[winners[0]] += 1
            elif winners:
                draws += 1
            else:
                no_winner += 1
            log.info("match %d/%d: winners %s; wins so far %s", index + 1, games, winners, wins)
    return {
        "games": games,
        "wins": wins,
        "draws": draws,
        "no_winner": no_winner,
        "seats": list(seats),
        "budget_ms": budget_ms,
        "iterations": iterations,
        "seed": seed,
        "seconds": round(time.perf_counter() - started, 3),
        "moves": moves,
    }


def _one_match(
    task: tuple[str, list[str], int, int, int, dict | None, int | None],
) -> tuple[list[str], dict[str, int]]:
    """Match ``index`` of a run: the policies among its winners, and the
    decisions per policy. Its seeds come from ``seed`` and ``index`` alone."""
    game_name, seats, index, budget_ms, seed, options, iterations = task
    game = get_game(game_name)
    shift = index % len(seats)
    order = seats[shift:] + seats[:shift]
    master = random.Random(f"{seed}:{index}")
    state = game.setup(match_options(game, options), len(seats), master.getrandbits(63))
    rng = random.Random(master.getrandbits(63))
    played = play_match(game, state, order, rng, budget_ms / 1000, iterations)
    return sorted({order[seat] for seat in game.outcome(state)["winners"]}), played


def match_options(game: Game, options: dict | None) -> dict[str, Any]:
    """The options an arena match is played with, loaded: the game's
    ``arena_options`` (what keeps a match between bots bounded), then
    ``options`` over them."""
    arena_defaults = getattr(game, "arena_options", {})
    return game.options_schema().load({**arena_defaults, **(options or {})})


def play_match(
    game: Game,
    state: State,
    order: list[str],
    rng: random.Random,
    budget_s: float,
    iterations: int | None = None,
) -> dict[str, int]:
    """Play ``state`` to the end, seat ``s`` by policy ``order[s]``; in a
    simultaneous round the seats act in seat order. Returns decisions per policy."""
    moves = dict.fromkeys(order, 0)
    while actors := game.to_act(state):
        seat = actors[0]
        policy = order[seat]
        action = choose_action(game, state, seat, policy, rng, budget_s, iterations)
        game.apply(state, seat, action)
        moves[policy] += 1
    return moves


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def report(result: dict[str, Any]) -> str:
    """Win rates with their 95% confidence intervals, one line per policy."""
    n = result["games"]
    lines = [
        f"{n} matches, seats {','.join(result['seats'])}, "
        f"budget {result['budget_ms']} ms"
        + (f" or {result['iterations']} iterations" if result.get("iterations") else "")
        + f" per mcts move, seed {result['seed']}, "
        f"{result['seconds']:.0f} s"
    ]
    for policy, count in result["wins"].items():
        low, high = wilson(count, n)
        lines.append(
            f"{policy:>7}: {count:4d} wins  {_percent(count / n if n else 0)}"
            f"  95% CI [{_percent(low)}, {_percent(high)}]"
        )
    lines.append(f"  draws: {result['draws']:4d}")
    if result["no_winner"]:
        lines.append(f"no winner: {result['no_winner']:4d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engines.ai.arena", description="Measure bot strength."
    )
    parser.add_argument("--game", required=True)
    parser.add_argument("--seats", required=True, help="policies, one per seat: mcts,random")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--budget-ms", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--iterations", type=int, default=None, help="cap each mcts move at N iterations"
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes playing matches")
    parser.add_argument("--options", default="{}", help="match options as JSON")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    result = run(
        args.game,
        args.seats.split(","),
        args.games,
        args.budget_ms,
        args.seed,
        orjson.loads(args.options),
        args.iterations,
        args.jobs,
    )
    if args.json:
        out = {"games": result["games"], "wins": result["wins"], "draws": result["draws"]}
        sys.stdout.write(orjson.dumps(out).decode() + "\n")
    else:
        sys.stdout.write(report(result) + "\n")
    return 0


def _percent(value: float) -> str:
    return f"{100 * value:5.1f}%"


if __name__ == "__main__":
    sys.exit(main())
