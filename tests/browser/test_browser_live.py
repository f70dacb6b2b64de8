"""Issue 17, point 5: a real Chromium, on a page from another origin, follows
matches with EventSource and stream tickets and plays them with fetch."""

from __future__ import annotations

import pytest

GAMES = {
    "dekal": (2, {}),
    "pacal": (2, {}),
    "gaudi": (2, {"short_game": True}),
    "ducale": (2, {"target_score": 60}),
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_page_plays_a_whole_match_and_every_follower_gets_what_it_may_see(
    page, api_server, game
):
    players, options = GAMES[game]
    before = api_server.counting.counts.copy()
    result = page.evaluate(
        "([api, game, players, options]) => playFollowed(api, game, players, options)",
        [api_server.base, game, players, options],
    )
    # every follower (each seat by ticket, a spectator) got every event it
    # may see, in order, once, and its EventSource stopped at the end (204)
    assert len(result["streams"]) == players + 1
    for stream, log in zip(result["streams"], result["logs"], strict=True):
        assert stream == log
        assert stream[-1]["type"] == "match_over"
    assert result["streams"][0] != result["streams"][-1]  # a seat saw more than a spectator
    if game == "dekal":
        counts = api_server.counting.counts - before
        share = counts["preflight"] / (counts["preflight"] + counts["request"])
        print(f"dekal from a page: {counts['request']} requests, {counts['preflight']} preflights")
        assert share <= 0.05, counts


def test_one_stream_follows_eight_matches(page, api_server):
    result = page.evaluate("(api) => playEightOverOneStream(api)", api_server.base)
    for match_id, log in zip(result["ids"], result["logs"], strict=True):
        mine = [
            {k: v for k, v in e.items() if k not in ("match", "game")}
            for e in result["events"]
            if e["match"] == match_id
        ]
        assert mine == log
