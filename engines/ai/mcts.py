"""Information-set Monte Carlo tree search, written once for every game.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, 2012) with UCB1:

- Each iteration samples a world the searching seat cannot tell from the
  real one (``game.determinize``) and plays it down one tree whose edges are
  actions. A node's statistics are kept for the seat that chose the edge
  leading to it, so every seat picks what is best for itself.
- The actions available at a node depend on the sampled world (another
  seat's hand, say): selection uses each child's *availability* count (how
  many times it was legal when its parent was visited) in place of the
  parent's visit count, and a node is expanded while some legal action has
  no child yet.
- Simultaneous rounds (several seats in ``to_act``, like Dékal's reveal):
  the searching seat's choice is a tree edge; the other seats of the round
  then choose by the rollout policy, outside the tree, as their choices are
  secret. A round where the searching seat does not act is played out by
  the rollout policy in the same way.
- A game with a wide choice may narrow what the tree considers with
  ``search_actions`` (a subset of the legal actions, e.g. the best few by
  its evaluation); default: every legal action.
- Playouts use the game's ``rollout_action`` (default: random legal
  actions) and stop at the end of the match, or earlier where the game's
  ``playout_value`` returns per-seat values in [0, 1]; a game may instead
  provide its whole ``playout`` (a fast simulation of its own).

The answer is the most visited child of the root. The search stops when
``budget_s`` is spent, checked between playout steps too, so no single
iteration can overrun it by more than one engine step (or one game ``playout``).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

import orjson

from engines.core import Action, Game, Seat, State

EXPLORATION = 0.7  # UCB1's constant, for values spread over [0, 1]
MAX_PLAYOUT_STEPS = 5_000

Values = list[float]


class Node:
    """One edge of the tree and the statistics of the seat that took it."""

    __slots__ = ("action", "actor", "available", "children", "reward", "visits")

    def __init__(self, actor: Seat | None, action: Action | None) -> None:
        self.actor = actor
        self.action = action
        self.children: dict[bytes, Node] = {}
        self.visits = 0
        self.available = 0
        self.reward = 0.0


class _Timeout(Exception):
    """The budget ran out in the middle of an iteration."""


def clone(state: State) -> State:
    """A deep copy of a plain-JSON state, several times faster than deepcopy."""
    return orjson.loads(orjson.dumps(state))


def search(
    game: Game,
    state: State,
    seat: Seat,
    rng: random.Random,
    budget_s: float,
    iterations: int | None = None,
    exploration: float | None = None,
) -> Action:
    """The action ``seat`` should play, by ISMCTS within ``budget_s`` seconds.

    ``iterations`` caps the number of iterations (tests use it to make the
    search reproducible); the time budget applies in any case.
    ``exploration``: UCB1's constant (default ``EXPLORATION``). ``state`` is
    only read through ``game.legal_actions(state, seat)`` and
    ``game.determinize``.
    """
    deadline = time.perf_counter() + budget_s
    actions = game.legal_actions(state, seat)
    if len(actions) == 1:
        return actions[0]
    search = _Search(game, seat, rng, deadline, exploration or EXPLORATION)
    search.start = game.determinize(state, seat, rng)
    root = Node(None, None)
    done = 0
    while (iterations is None or done < iterations) and time.perf_counter() < deadline:
        try:
            search.iterate(root, game.determinize(state, seat, rng))
        except _Timeout:
            break
        done += 1
    if not root.children:
        return rng.choice(actions)
    best = max(root.children.values(), key=lambda child: child.visits)
    return best.action


def outcome_values(game: Game, state: State) -> Values:
    """A share of 1 among the winners of a finished match, 0 for the others."""
    outcome = game.outcome(state)
    winners = outcome["winners"]
    values = [0.0] * len(outcome["scores"])
    for winner in winners:
        values[winner] = 1.0 / len(winners)
    return values


class _Search:
    """The state of one search: the game's hooks, the clock, the rng."""

    def __init__(
        self, game: Game, seat: Seat, rng: random.Random, deadline: float, exploration: float
    ) -> None:
        self.game = game
        self.seat = seat
        self.rng = rng
        self.deadline = deadline
        self.exploration = exploration
        self.start: State = {}
        self.rollout: Callable[[State, Seat, random.Random], Action] = getattr(
            game, "rollout_action", self._random_action
        )
        self.value: Callable[[State, State], Values | None] = getattr(
            game, "playout_value", lambda start, state: None
        )
        self.candidates: Callable[[State, Seat], list[Action]] = getattr(
            game, "search_actions", game.legal_actions
        )
        self.game_playout: Callable[[State, State, random.Random], Values] | None = getattr(
            game, "playout", None
        )

    def iterate(self, root: Node, world: State) -> None:
        """Select, expand, play out and back up once, in ``world``."""
        path = [root]
        node = root
        values = None
        expanded = False
        while values is None and not expanded:
            actors = self.game.to_act(world)
            if not actors:
                break
            chooser = self._tree_actor(actors)
            if chooser is None:
                self._play_round(world, actors)
            else:
                node, expanded = self._descend(node, world, chooser)
                path.append(node)
                if len(actors) > 1:
                    self._play_round(world, [s for s in actors if s != chooser])
            values = self.value(self.start, world)
        if values is None:
            values = self._playout(world)
        for visited in path[1:]:
            visited.visits += 1
            visited.reward += values[visited.actor]
        root.visits += 1

    def _tree_actor(self, actors: list[Seat]) -> Seat | None:
        """Who chooses by the tree: the only actor, or the searching seat in
        a simultaneous round; None when the round is the rollout policy's."""
        if len(actors) == 1:
            return actors[0]
        return self.seat if self.seat in actors else None

    def _descend(self, node: Node, world: State, actor: Seat) -> tuple[Node, bool]:
        """Apply the tree's choice for ``actor``; return the child and whether
        it is new (expansion ends the tree phase)."""
        untried: list[tuple[bytes, Action]] = []
        available: list[Node] = []
        for action in self.candidates(world, actor):
            key = orjson.dumps(action, option=orjson.OPT_SORT_KEYS)
            child = node.children.get(key)
            if child is None:
                untried.append((key, action))
            else:
                child.available += 1
                available.append(child)
        if untried:
            key, action = self.rng.choice(untried)
            child = Node(actor, action)
            child.available = 1
            node.children[key] = child
            self.game.apply(world, actor, action)
            return child, True
        child = max(available, key=self._ucb)
        self.game.apply(world, actor, child.action)
        return child, False

    def _ucb(self, child: Node) -> float:
        return child.reward / child.visits + self.exploration * math.sqrt(
            math.log(child.available) / child.visits
        )

    def _play_round(self, world: State, seats: list[Seat]) -> None:
        """The given seats act in turn by the rollout policy (each if still to act)."""
        for other in seats:
            if other in self.game.to_act(world):
                self.game.apply(world, other, self.rollout(world, other, self.rng))

    def _playout(self, world: State) -> Values:
        """Play on by the rollout policy until the game's values or the end
        (or let the game play out in its own fast way)."""
        if self.game_playout is not None:
            return self.game_playout(self.start, world, self.rng)
        for _ in range(MAX_PLAYOUT_STEPS):
            if time.perf_counter() > self.deadline:
                raise _Timeout
            actors = self.game.to_act(world)
            if not actors:
                break
            self._play_round(world, actors)
            values = self.value(self.start, world)
            if values is not None:
                return values
        return self.value(self.start, world) or outcome_values(self.game, world)

    def _random_action(self, world: State, seat: Seat, rng: random.Random) -> Action:
        return rng.choice(self.game.legal_actions(world, seat))
