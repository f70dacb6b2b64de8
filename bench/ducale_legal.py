"""How long and how slow is Ducale's ``legal_actions`` at its worst? (not a test)

A 14-card hand with jokers, six melds on the table to lay off on (three of them
holding jokers the hand may win back), in eight situations: after drawing (play
phase, 14 cards) or before (draw phase: 13 cards and the discard to take), with
``opening_minimum`` 0 or 51, laid down or not. The hands tried: hand-made hard
ones, random hands drawn from few suits and ranks (where melds overlap the
most), and for each situation a hill climb from the longest lists found, one
card changed at a time, keeping the hand when its list is no shorter. For the
longest list and the slowest call of each situation: the actions, the time of
one call (best of a few, the cache of the hand's melds cleared first) and the
time ``orjson`` takes to serialise the list. Then random games for the typical
figures. Times are this process's CPU time, as in ``bench.gaudi_legal``: other
work on the machine moves them little. The figures go to
``bench/results/ducale_legal.json`` (``bench.results``)::

    python -m bench.ducale_legal
    python -m bench.ducale_legal --samples 2000 --climb 400 --games 50
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from bench import results
from engines.ducale import GAME, melds, rules
from engines.ducale.melds import JOKER

HEARTS = [melds.card_at(p, "H") for p in range(1, 14)]
HARD_HANDS = {
    "A..K of hearts + joker": [*HEARTS, JOKER],
    "A..Q of hearts + 2 jokers": [*HEARTS[:12], JOKER, JOKER],
    # The longest list found by hill climbs on the number of openings at 51.
    "3..K of hearts + 3 jokers": [*HEARTS[2:], JOKER, JOKER, JOKER],
    "3..K + A of hearts + 2 jokers": [*HEARTS[2:], "AH", JOKER, JOKER],
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
SITUATIONS: dict[str, dict[str, Any]] = {
    f"{phase}, opening {opening}, {'laid down' if laid_down else 'not laid down'}": {
        "draw": phase == "draw",
        "opening": opening,
        "laid_down": laid_down,
    }
    for phase in ("play", "draw")
    for opening in (0, 51)
    for laid_down in (False, True)
}


class Measure(NamedTuple):
    ms: float
    actions: int
    dump_ms: float
    kilobytes: float


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


def measure(state: dict[str, Any], repeat: int = 3) -> Measure:
    """Best of ``repeat`` calls, each with the cache of the hand's melds cleared
    (the first call for a hand), and the best of ``repeat`` serialisations."""
    best = dump = float("inf")
    actions: list[dict[str, Any]] = []
    for _ in range(repeat):
        rules._hand_melds.cache_clear()
        start = time.process_time()
        actions = rules.legal_actions(state, 0)
        best = min(best, time.process_time() - start)
    for _ in range(repeat):
        start = time.process_time()
        body = orjson.dumps(actions)
        dump = min(dump, time.process_time() - start)
    return Measure(best * 1000, len(actions), dump * 1000, len(body) / 1024)


def count(hand: list[str], where: dict[str, Any]) -> int:
    return len(rules.legal_actions(situation(hand, **where), 0))


def random_hand(rng: random.Random) -> list[str]:
    suits = rng.sample(melds.SUITS, rng.choice([1, 2, 2, 3]))
    low = rng.randint(1, 8)
    pool = [melds.card_at(p, s) for s in suits for p in range(low, min(low + 7, 14) + 1)]
    pool = [card for card in pool for _ in range(2)]
    jokers = rng.choice([1, 1, 2, 2, 3, 4])
    return [*rng.sample(pool, min(len(pool), 14 - jokers)), *[JOKER] * jokers]


def possible(hand: list[str]) -> bool:
    """At most two of each card and four jokers: the two decks."""
    counts = Counter(hand)
    return all(n <= (4 if card == JOKER else 2) for card, n in counts.items())


def changed(hand: list[str], rng: random.Random) -> list[str]:
    """``hand`` with one card replaced by a near one (a neighbour in its suit, the
    same rank in another suit), now and then by a joker or any card."""
    new = list(hand)
    index = rng.randrange(len(new))
    card = new[index]
    if card == JOKER or rng.random() < 0.1:
        new[index] = rng.choice(melds.CARDS)
    elif rng.random() < 0.5:
        step = rng.choice([-2, -1, 1, 2])
        new[index] = melds.card_at(
            min(13, max(1, melds.rank_of(card) + step)), melds.suit_of(card)
        )
    else:
        new[index] = melds.RANKS[melds.rank_of(card) - 1] + rng.choice(melds.SUITS)
    return new


def climb(
    starts: list[list[str]], where: dict[str, Any], steps: int, rng: random.Random
) -> list[list[str]]:
    """The longest lists reached from each start by ``steps`` changes in all."""
    reached = []
    for hand in starts:
        size = count(hand, where)
        for _ in range(steps // len(starts)):
            new = changed(hand, rng)
            if possible(new) and (new_size := count(new, where)) >= size:
                hand, size = new, new_size
        reached.append(hand)
    return reached


def line(label: str, found: Measure) -> str:
    return (
        f"  {label:44} {found.ms:7.1f} ms {found.actions:6d} actions"
        f"   orjson {found.dump_ms:5.1f} ms {found.kilobytes:7.0f} KiB"
    )


def worst_cases(samples: int, steps: int, seed: int, out: Callable[[str], None]) -> dict[str, Any]:
    """Per situation, its longest list and its slowest call, each with its hand."""
    rng = random.Random(seed)
    figures: dict[str, Any] = {}
    randoms = [random_hand(rng) for _ in range(samples)]
    for name, where in SITUATIONS.items():
        out(f"\n{name}")
        tried = [*HARD_HANDS.values(), *randoms]
        measured = [(measure(situation(hand, **where), repeat=1), hand) for hand in tried]
        if steps:
            longest = sorted(measured, key=lambda item: item[0].actions)[-4:]
            reached = climb([hand for _, hand in longest], where, steps, rng)
            measured += [(measure(situation(hand, **where), repeat=1), hand) for hand in reached]
        for label, field in (("longest list", "actions"), ("slowest call", "ms")):
            # The three slowest of one call each, timed again: one call is noisy.
            top = sorted(measured, key=lambda item: getattr(item[0], field))[-3:]
            again = [(measure(situation(hand, **where)), hand) for _, hand in top]
            found, hand = max(again, key=lambda item: getattr(item[0], field))
            out(line(label, found))
            out(f"    {' '.join(hand)}")
            figures.setdefault(name, {})[label] = {
                "ms": round(found.ms, 2),
                "actions": found.actions,
                "orjson_ms": round(found.dump_ms, 2),
                "kib": round(found.kilobytes),
                "hand": hand,
            }
    return figures


def random_games(games: int, out: Callable[[str], None]) -> dict[str, Any]:
    times: list[float] = []
    sizes: list[int] = []
    for seed in range(games):
        rng = random.Random(seed)
        n_players = 2 + seed % 5
        # Random play can block a table for good (the rulebook sets no limit
        # to the stock's rebuilds): a bench must end.
        options = GAME.options_schema().load(
            {"opening_minimum": 51 if seed % 2 else 0, "max_stock_rebuilds": 3}
        )
        state = GAME.setup(options, n_players, seed)
        while seats := GAME.to_act(state):
            start = time.process_time()
            actions = GAME.legal_actions(state, seats[0])
            times.append((time.process_time() - start) * 1000)
            sizes.append(len(actions))
            GAME.apply(state, seats[0], rng.choice(actions))
    times.sort()
    mean, p99 = statistics.fmean(times), times[int(len(times) * 0.99)]
    out(f"\nrandom games: {games} games, {len(times)} legal_actions calls")
    out(f"  time: mean {mean:.3f} ms, p99 {p99:.2f} ms, worst {times[-1]:.1f} ms")
    out(f"  actions: mean {statistics.fmean(sizes):.1f}, most {max(sizes)}")
    return {
        "games": games,
        "calls": len(times),
        "mean_ms": round(mean, 3),
        "p99_ms": round(p99, 2),
        "worst_ms": round(times[-1], 1),
        "mean_actions": round(statistics.fmean(sizes), 1),
        "most_actions": max(sizes),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=300, help="random hard hands")
    parser.add_argument("--climb", type=int, default=200, help="hill-climb steps a situation")
    parser.add_argument("--games", type=int, default=20, help="random games to 500")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else argv

    def out(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    out(f"Ducale legal_actions, Python {sys.version.split()[0]}")
    figures = {
        "worst_cases": worst_cases(args.samples, args.climb, args.seed, out),
        "random_games": random_games(args.games, out),
    }
    if args.json:
        out(f"wrote {results.write(args.json, 'ducale_legal', argv, figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(results.command_line("ducale_legal")))
