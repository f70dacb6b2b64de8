"""Plays a match of every game through the generated Python client alone.

Run by tests/contract/test_generated_clients.py as
``python play_every_game.py BASE_URL`` with the generated package on the path.
Every move is one of the typed legal actions the client read from the
match answer, sent back as it is; every event is read as the game's typed
event union.
"""

from __future__ import annotations

import importlib
import random
import sys
from typing import Any

from ludotheque_api_client import AuthenticatedClient, Client, models
from ludotheque_api_client.api.games import list_games

SHORT = {"target_score": 1, "manches_to_win": 1}


def operation(game: str, name: str) -> Any:
    return importlib.import_module(f"ludotheque_api_client.api.{game}.{game}_{name}")


def play(base: str, game: str, rng: random.Random) -> None:
    prefix = game.capitalize()
    anyone = Client(base_url=base, raise_on_unexpected_status=True)
    options_type = getattr(models, f"{prefix}MatchOptions")
    known = options_type.from_dict({})  # what the options take: keep the short ones
    short = {k: v for k, v in SHORT.items() if k in {f.name for f in known.__attrs_attrs__}}
    body = getattr(models, f"{prefix}CreateMatch")(
        players=[models.Player(name="Ada"), models.Player(name="Bob")],
        options=options_type.from_dict(short),
        seed=rng.randrange(2**31),
    )
    created = operation(game, "create_match").sync(client=anyone, body=body)
    assert created.status.value == "active", created
    seats = [
        AuthenticatedClient(base_url=base, token=s.token, raise_on_unexpected_status=True)
        for s in created.seats
    ]
    get_match = operation(game, "get_match")
    play_action = operation(game, "play_action")
    match_type = getattr(models, f"{prefix}Match")
    moves = 0
    while True:
        views = [get_match.sync(created.id, client=s, legal_actions=True) for s in seats]
        assert all(isinstance(v, match_type) for v in views), views
        if views[0].status.value == "finished":
            break
        seat = next(i for i, v in enumerate(views) if v.legal_actions)
        answer = views[seat]
        while answer.legal_actions and answer.status.value != "finished":
            action = rng.choice(answer.legal_actions)  # a typed action, sent back as it is
            answer = play_action.sync(
                created.id, client=seats[seat], body=action, legal_actions=True
            )
            assert isinstance(answer, match_type), answer
            moves += 1
    spectator = get_match.sync(created.id, client=anyone)
    assert isinstance(spectator, match_type) and spectator.your_seat is None
    assert spectator.outcome is not None
    events_type = getattr(models, f"{prefix}Events")
    for client in [anyone, *seats]:
        after = 0
        while True:
            page = operation(game, "events").sync(created.id, client=client, after=after)
            assert isinstance(page, events_type), page
            for event in page.events:
                # a typed event of the union, never a bare dict
                assert type(event).__name__.endswith("Event"), event
                assert (
                    not event.additional_properties
                    if hasattr(event, "additional_properties")
                    else True
                )
            if not page.events:
                break
            after = page.next_
    print(f"{game}: {moves} moves through the generated client")


def main() -> None:
    base = sys.argv[1]
    games = list_games.sync(client=Client(base_url=base, raise_on_unexpected_status=True))
    rng = random.Random(3)
    for game in games.games:
        play(base, game.name, rng)


if __name__ == "__main__":
    main()
