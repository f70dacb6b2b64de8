"""Bots for every registered game: ``random``, ``greedy`` and ``mcts``.

The policies are written once, here, against the engine contract
(``engines/core.py``); a game only provides its own knowledge. The service
calls :func:`choose_action`; ``engines.ai.arena.run`` measures strength.

What a game adds so that its bots work (Dékal and Pacal are the models):

In ``engines/<game>/rules.py``, next to ``view``:

- ``determinize(state, seat, rng) -> State``: a NEW state (the input is
  untouched) in which everything ``seat`` cannot see is resampled
  consistently with what it has seen, and the seed of later chance
  (``state["rng"]``) is redrawn. It must give ``seat`` exactly the same
  view, and it must depend only on that view and on ``rng`` (build pools
  of unseen cards as sorted lists before shuffling them), so that two
  states a seat cannot tell apart give the same bot decisions.

In ``engines/<game>/bots.py``:

- ``evaluate(state, seat) -> float``: the game's heuristic value of a
  state for ``seat``, larger is better (e.g. own estimated score against
  the best opponent's);
- ``greedy(state, seat, rng) -> Action``: one ply: try each legal action of
  ``seat`` on a determinized copy and keep the best evaluation. A
  simultaneous choice or a choice whose effect depends on chance is valued
  after the rest of the round (others' choices, the reveal) is played out.
- optionally, search hooks that make ``mcts`` much stronger:

  - ``rollout_action(state, seat, rng) -> Action``: a fast, reasonable
    policy for playouts. It only ever runs on determinized states, so it
    may read the whole state. Default: a uniformly random legal action.
  - ``playout_value(start, state) -> list[float] | None``: per-seat values
    in [0, 1] (an estimated chance of winning) that end a playout early,
    e.g. at the end of the current manche or a few turns after ``start``
    (the searched state); None to play on. It is also asked about final
    states, where it may shape the result (win plus a margin); where it
    returns None at the end, the outcome is used: a share of 1 among the
    winners.
  - ``playout(start, state, rng) -> list[float]``: the game's own playout
    from a search leaf, replacing the generic loop of ``rollout_action``
    steps: e.g. the rest of the manche played on light data without the
    engine's checks (Pacal), when the engine is too slow for enough
    playouts. It returns the per-seat values like ``playout_value``.
  - ``search_actions(state, seat) -> list[Action]``: the subset of the
    legal actions the tree considers, for a wide choice (Pacal's 105
    offers: the best few by the evaluation). Default: every legal action.

  Measure before adding hooks: a search valued by a static evaluation a
  few moves ahead need not beat the greedy policy that uses the same
  evaluation (it did not in Pacal); playouts to a real result (the end of
  the manche) did. See docs/clients/bots.md.

Then expose them on the game object in ``engines/<game>/__init__.py``:
``determinize``, ``evaluate``, ``greedy`` and, if written, the search
hooks. ``tests/engines/test_ai.py`` runs the generic checks
(views kept by determinize, legal actions only, hidden information unused,
time budget) over every registered game that has them.

The information rule: a policy may look at the real state only through
``game.legal_actions(state, seat)`` (the seat's own options, which it knows)
and ``game.determinize(state, seat, rng)``. The search therefore plays in
sampled worlds: information-set MCTS (``mcts.py``).
"""

from __future__ import annotations

import random

from engines.ai import policies
from engines.core import Action, Game, Seat, State

POLICIES = ("random", "greedy", "mcts")


def choose_action(
    game: Game,
    state: State,
    seat: Seat,
    policy: str,
    rng: random.Random,
    budget_s: float = 1.0,
    iterations: int | None = None,
) -> Action:
    """One legal action of ``seat`` (which must be to act), chosen by ``policy``.

    ``state`` is not mutated. ``mcts`` searches until ``budget_s`` seconds are
    spent (or, when given, ``iterations`` iterations are done, whichever comes
    first); the other policies ignore both.
    """
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if seat not in game.to_act(state):
        raise ValueError(f"seat {seat} is not to act")
    if policy == "random":
        return policies.random_action(game, state, seat, rng)
    if policy == "greedy":
        return policies.greedy_action(game, state, seat, rng)
    return policies.mcts_action(game, state, seat, rng, budget_s, iterations)


__all__ = ["POLICIES", "choose_action"]
