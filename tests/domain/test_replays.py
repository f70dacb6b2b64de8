"""service.domain.replays without a server: the replay of a record, and the
process's cache of replays, bounded in bytes, computing each one once."""

from __future__ import annotations

import copy
import random

import orjson

from engines import GAMES
from service.domain.replays import Replays, replay

GAME = GAMES["pacal"]


def record_of(match_id: str, seed: int) -> dict:
    """A finished match between random players, as a record has it."""
    options = GAME.options_schema().load({"manches_to_win": 1})
    state = GAME.setup(copy.deepcopy(options), 2, seed)
    rng, actions = random.Random(seed), []
    while GAME.outcome(state) is None:
        seat = GAME.to_act(state)[0]
        action = rng.choice(GAME.legal_actions(state, seat))
        events = GAME.apply(state, seat, copy.deepcopy(action))
        public = [event for event in events if "to" not in event]
        actions.append({"seat": seat, "action": action, "timed_out": False, "events": public})
    seats = [{"seat": seat, "name": f"P{seat}", "bot": None} for seat in range(2)]
    return {
        "id": match_id,
        "game": "pacal",
        "options": options,
        "seats": seats,
        "seeded": True,
        "seed": seed,
        "actions": actions,
        "endings": [],
        "outcome": GAME.outcome(state),
        "final_view": GAME.view(state, None),
    }


def test_each_step_keeps_the_view_of_its_moment():
    record = record_of("a", 1)
    steps = replay(GAME, record)["steps"]
    assert steps[-1]["view"] == record["final_view"]
    # a view shares nothing with the state the next actions change
    assert steps[0]["view"] != steps[-1]["view"]
    assert steps[0]["view"]["players"][0]["pyramid"] != steps[-1]["view"]["players"][0]["pyramid"]


def test_a_replay_is_computed_once_while_it_stays_in_the_cache():
    records = {match_id: record_of(match_id, seed) for seed, match_id in enumerate("abc")}
    asked: list[str] = []

    def record(game, match_id):
        asked.append(match_id)
        return records[match_id]

    size = {key: len(orjson.dumps(replay(GAME, found))) for key, found in records.items()}
    # room for "a" with either of the others, not for all three
    replays = Replays(record, budget=size["a"] + max(size["b"], size["c"]))
    first = replays.encoded(GAME, "a")
    assert orjson.loads(first) == replay(GAME, records["a"])
    assert replays.encoded(GAME, "a") is first and asked == ["a"]
    replays.encoded(GAME, "b")
    replays.encoded(GAME, "a")  # the latest asked for, "b" the oldest
    replays.encoded(GAME, "c")  # over the budget: "b" goes
    assert list(replays.kept) == [("pacal", "a"), ("pacal", "c")]
    assert replays.size <= replays.budget
    replays.encoded(GAME, "b")
    assert asked == ["a", "b", "c", "b"]


def test_a_replay_larger_than_the_whole_cache_is_served_not_kept():
    replays = Replays(lambda game, match_id: record_of(match_id, 4), budget=100)
    assert orjson.loads(replays.encoded(GAME, "a"))["id"] == "a"
    assert not replays.kept and replays.size == 0
