"""A small program on the generated Python client, type-checked with
``mypy --strict`` by tests/contract/test_generated_clients.py (and run).

It reads a Ducale view and builds actions from it: a card read from the
hand is the very type a discard takes, and a typed event names its card.
"""

from __future__ import annotations

import sys

from ludotheque_api_client import AuthenticatedClient, Client
from ludotheque_api_client.api.ducale import (
    ducale_create_match,
    ducale_events,
    ducale_get_match,
    ducale_play_action,
)
from ludotheque_api_client.models import (
    DucaleCard,
    DucaleCreateMatch,
    DucaleDiscardAction,
    DucaleDiscardActionType,
    DucaleDiscardedEvent,
    DucaleDrawAction,
    DucaleDrawActionType,
    DucaleEvents,
    DucaleMatch,
    Player,
)


def discard_from(match: DucaleMatch) -> DucaleDiscardAction:
    """The discard of the last card of the caller's hand."""
    hand: list[DucaleCard] | None = match.view.hand
    assert hand, "a seat sees its hand"
    return DucaleDiscardAction(type_=DucaleDiscardActionType.DISCARD, card=hand[-1])


def main(base: str) -> None:
    anyone = Client(base_url=base)
    body = DucaleCreateMatch(players=[Player(name="Ada"), Player(name="Bob")], seed=11)
    created = ducale_create_match.sync(client=anyone, body=body)
    assert isinstance(created, DucaleMatch)
    token = created.seats[0].token
    assert isinstance(token, str)
    ada = AuthenticatedClient(base_url=base, token=token)
    draw = DucaleDrawAction(type_=DucaleDrawActionType.DRAW)
    drawn = ducale_play_action.sync(created.id, client=ada, body=draw, legal_actions=True)
    assert isinstance(drawn, DucaleMatch)
    discard = discard_from(drawn)
    assert discard in (drawn.legal_actions or []), "built from the view, as the server lists it"
    after = ducale_play_action.sync(created.id, client=ada, body=discard)
    assert isinstance(after, DucaleMatch)
    seen = ducale_get_match.sync(created.id, client=anyone)
    assert isinstance(seen, DucaleMatch) and seen.view.hand is None
    page = ducale_events.sync(created.id, client=anyone)
    assert isinstance(page, DucaleEvents)
    discarded: list[DucaleCard] = []
    for event in page.events:
        if isinstance(event, DucaleDiscardedEvent):
            discarded.append(event.card)
    assert discarded == [discard.card], discarded
    print(f"discarded {discard.card.value}")


if __name__ == "__main__":
    main(sys.argv[1])
