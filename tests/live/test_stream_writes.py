"""Issue 17: a stream's fan-out is cheap. What one read of the log brings
(the backlog when a stream opens, the events of one commit afterwards) goes
out to each stream in one write, whose bytes are made once per viewer
class; nothing is lost, duplicated or reordered on the way."""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

from tests.support.matches import create_match, events_of, play_out
from tests.support.streams import text_events

GAME = "dekal"


def chunks(response) -> list[list[tuple[int, dict]]]:
    """The events of each chunk of a chunked SSE body (as written by the
    server), checking that no event is split between two chunks."""
    found = []
    for chunk in response.raw.read_chunked(decode_content=False):
        text = chunk.decode()
        assert text.endswith("\n\n"), text  # whole events only
        found.append(text_events(text))
    return found


def test_a_streams_backlog_goes_out_in_one_write(live, api):
    match_id, tokens = create_match(api, GAME, seed=5)
    play_out(api, GAME, match_id, tokens, 5)
    url = live.url(f"/v1/games/{GAME}/matches/{match_id}/stream")
    with api.http.get(url, stream=True, timeout=30) as response:
        written = chunks(response)
    expected = events_of(api, GAME, match_id, None)
    assert len(written) == 1  # the retry line and every event, then the end
    assert [data for _, data in written[0]] == expected
    assert [index for index, _ in written[0]] == [e["index"] for e in expected]


def test_the_events_of_one_commit_reach_each_stream_in_one_write(live, api):
    match_id, tokens = create_match(api, GAME, seed=6)
    url = live.url(f"/v1/games/{GAME}/matches/{match_id}/stream")
    viewers = [None, *tokens, None, *tokens]

    def follow(token: str | None) -> list:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        with api.http.get(url, headers=headers, stream=True, timeout=60) as response:
            return chunks(response)

    with ThreadPoolExecutor(len(viewers)) as pool:
        following = [pool.submit(follow, token) for token in viewers]
        time.sleep(0.3)
        play_out(api, GAME, match_id, tokens, 6)
        written = [f.result(timeout=60) for f in following]
    for i, token in enumerate(viewers):
        expected = events_of(api, GAME, match_id, token)
        got = [event for chunk in written[i] for event in chunk]
        assert [data for _, data in got] == expected  # each as this viewer may see it
        assert [index for index, _ in got] == [e["index"] for e in expected]
        chunk_of = defaultdict(set)  # a commit's events share their version
        for n, chunk in enumerate(written[i]):
            for _, data in chunk:
                chunk_of[data["version"]].add(n)
        assert all(len(found) == 1 for found in chunk_of.values())
        # fewer writes than events: the coalescing is real
        assert len([c for c in written[i] if c]) < len(got)
