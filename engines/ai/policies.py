"""The three policies, and the generic one-ply search games may reuse.

Every policy sees the real state only through ``game.legal_actions(state,
seat)`` and ``game.determinize(state, seat, rng)`` (see ``engines.ai``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engines.ai import mcts
from engines.core import Action, Game, Seat, State

Evaluation = Callable[[State, Seat], float]


def supported(game: Game) -> tuple[str, ...]:
    """The policies ``game`` can be played by: ``random`` always; ``greedy``
    once its ``bots.py`` exists; ``mcts`` once it can ``determinize``."""
    names = ["random"]
    if hasattr(game, "greedy"):
        names.append("greedy")
    if hasattr(game, "determinize"):
        names.append("mcts")
    return tuple(names)


def random_action(game: Game, state: State, seat: Seat, rng: random.Random) -> Action:
    """A uniformly random legal action (also what a turn clock plays)."""
    return rng.choice(game.legal_actions(state, seat))


def greedy_action(game: Game, state: State, seat: Seat, rng: random.Random) -> Action:
    """The game's own one-ply policy (``bots.greedy``)."""
    _require(game, "greedy")
    return game.greedy(state, seat, rng)


def mcts_action(
    game: Game,
    state: State,
    seat: Seat,
    rng: random.Random,
    budget_s: float,
    iterations: int | None = None,
) -> Action:
    """Information-set MCTS within ``budget_s`` seconds (``mcts.search``)."""
    _require(game, "determinize")
    return mcts.search(game, state, seat, rng, budget_s, iterations)


def one_ply(
    game: Game,
    state: State,
    seat: Seat,
    rng: random.Random,
    evaluate: Evaluation,
    samples: int = 1,
) -> Action:
    """The legal action whose result ``evaluate`` values best for ``seat``.

    Each action is played on ``samples`` determinized copies; when ``seat``
    acts in a simultaneous round, the other seats of that round then play by
    the game's ``rollout_action`` (random legal actions without one) so
    that the round resolves before the evaluation. Ties are broken at
    random. A generic ``greedy`` for games that need nothing finer.
    """
    actions = game.legal_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    others_policy = getattr(game, "rollout_action", None) or _random_policy(game)
    worlds = [game.determinize(state, seat, rng) for _ in range(samples)]
    round_seats = [s for s in game.to_act(worlds[0]) if s != seat]
    best: list[Action] = []
    best_value = float("-inf")
    for action in actions:
        total = 0.0
        for world in worlds:
            after = mcts.clone(world)
            game.apply(after, seat, action)
            for other in round_seats:
                if other in game.to_act(after):
                    game.apply(after, other, others_policy(after, other, rng))
            total += evaluate(after, seat)
        if total > best_value:
            best, best_value = [action], total
        elif total == best_value:
            best.append(action)
    return rng.choice(best)


def _random_policy(game: Game) -> Callable[[State, Seat, random.Random], Action]:
    def policy(state: State, seat: Seat, rng: random.Random) -> Action:
        return random_action(game, state, seat, rng)

    return policy


def _require(game: Game, attribute: str) -> None:
    if not hasattr(game, attribute):
        raise ValueError(f"{game.name} has no {attribute!r} yet: its bots.py is still to write")
