"""How fast is Ducale's ``legal_actions`` at its worst? (not a test)

A 14-card hand with jokers, melds on the table (some holding jokers the hand
could swap), in the four situations that matter: melding freely, or opening
under ``opening_minimum: 51``; after drawing (play phase, 14 cards) or before
(draw phase: 13 cards and the discard to take). Hand-made hard hands come
first, then random hands drawn from few suits and ranks (where melds overlap
the most), then random games for the typical figures::

    python -m bench.ducale_legal
    python -m bench.ducale_legal --samples 2000 --games 50
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from engines.ducale import GAME, melds, rules
from engines.ducale.melds import JOKER

HEARTS = [melds.card_at(p, "H") for p in range(1, 14)]
HARD_HANDS = {
    "A..K of hearts + joker": [*HEARTS, JOKER],
    "A..Q of hearts + 2 jokers": [*HEARTS[:12], JOKER, JOKER],
    "7s 8s 9s of all suits + 2 jokers": [
        *(rank + suit for rank in ("7", "8", "9") for suit in melds.SUITS),
        JOKER,
        JOKER,
    ],
    "6..J of hearts and spades + 2 jokers": [
        *(melds.card_at(p, suit) for suit in "HS" for p in range(6, 12)),
        JOKER,
        JOKER,
    ],
    "8..A of hearts, 8 9 10 of spades, 4 jokers": [
        *HEARTS[7:],
        "AH",
        *("8S", "9S", "10S"),
        *(JOKER,) * 4,
    ],
}
# Melds of the other player: lay-off targets at both ends, jokers to win back.
TABLE = [
    (["2S", "3S", "4S"], None),
    (["9D", JOKER, "JD"], None),
    (["KC", "KD", JOKER], "KH"),
    (["5C", "6C", "7C", "8C"], None),
    (["QS", "QD", "QC"], None),
    (["10H", JOKER, "QH"], None),
]


def situation(hand: list[str], *, draw: bool, opening: int, laid_down: bool) -> dict[str, Any]:
    """A two-player state where seat 0 holds ``hand`` (its last card is the
    discard to take when ``draw``)."""
    state = rules.setup({"opening_minimum": opening, "target_score": 500}, 2, 0)
    state["table"] = [
        {"id": i, "owner": 1, **melds.build_meld(cards, joker_as)}
        for i, (cards, joker_as) in enumerate(TABLE)
    ]
    state["next_meld_id"] = len(TABLE)
    state["hands"][0] = list(hand[:-1] if draw else hand)
    state["discard"] = [hand[-1]] if draw else ["2C"]
    state["phase"] = "draw" if draw else "play"
    state["laid_down"] = [laid_down, True]
    return state


def timed(state: dict[str, Any], repeat: int = 3) -> tuple[float, int]:
    """Best of ``repeat`` runs, in ms, and the number of actions."""
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = len(rules.legal_actions(state, 0))
        best = min(best, time.perf_counter() - start)
    return best * 1000, count


def random_hand(rng: random.Random) -> list[str]:
    suits = rng.sample(melds.SUITS, rng.choice([1, 2, 2, 3]))
    low = rng.randint(1, 8)
    pool = [melds.card_at(p, s) for s in suits for p in range(low, min(low + 7, 14) + 1)]
    pool = [card for card in pool for _ in range(2)]
    jokers = rng.choice([1, 1, 2, 2, 3, 4])
    return [*rng.sample(pool, min(len(pool), 14 - jokers)), *[JOKER] * jokers]


SITUATIONS: dict[str, dict[str, Any]] = {
    "play, free melds, laid down": {"draw": False, "opening": 0, "laid_down": True},
    "play, opening 51 not yet met": {"draw": False, "opening": 51, "laid_down": False},
    "draw, take the discard, laid down": {"draw": True, "opening": 0, "laid_down": True},
    "draw, take the discard to open 51": {"draw": True, "opening": 51, "laid_down": False},
}


def line(label: str, ms: float, count: int) -> str:
    return f"  {label:44} {ms:8.1f} ms {count:6d} actions"


def worst_cases(samples: int, seed: int, out: Callable[[str], None]) -> None:
    rng = random.Random(seed)
    randoms = [random_hand(rng) for _ in range(samples)]
    for name, where in SITUATIONS.items():
        out(f"\n{name}")
        for label, hand in HARD_HANDS.items():
            out(line(label, *timed(situation(hand, **where))))
        results = [(timed(situation(h, **where), repeat=1), h) for h in randoms]
        slowest = max(results, key=lambda item: item[0][0])[1]
        out(line(f"slowest of {samples} random hands", *timed(situation(slowest, **where))))
        out(f"    {' '.join(slowest)}")
        largest = max(results, key=lambda item: item[0][1])[1]
        out(line("longest list of the random hands", *timed(situation(largest, **where))))


def random_games(games: int, out: Callable[[str], None]) -> None:
    times: list[float] = []
    sizes: list[int] = []
    for seed in range(games):
        rng = random.Random(seed)
        n_players = 2 + seed % 5
        options = GAME.options_schema().load({"opening_minimum": 51 if seed % 2 else 0})
        state = GAME.setup(options, n_players, seed)
        while seats := GAME.to_act(state):
            start = time.perf_counter()
            actions = GAME.legal_actions(state, seats[0])
            times.append((time.perf_counter() - start) * 1000)
            sizes.append(len(actions))
            GAME.apply(state, seats[0], rng.choice(actions))
    times.sort()
    mean, p99 = statistics.fmean(times), times[int(len(times) * 0.99)]
    out(f"\nrandom games: {games} games, {len(times)} legal_actions calls")
    out(f"  time: mean {mean:.3f} ms, p99 {p99:.2f} ms, worst {times[-1]:.1f} ms")
    out(f"  actions: mean {statistics.fmean(sizes):.1f}, most {max(sizes)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=500, help="random hard hands")
    parser.add_argument("--games", type=int, default=20, help="random games to 500")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")

    out(f"Ducale legal_actions, Python {sys.version.split()[0]}")
    worst_cases(args.samples, args.seed, out)
    random_games(args.games, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
