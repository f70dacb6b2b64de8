"""The ranked queue's matchmaking (service/domain/queue.py): examples, and
properties over any waiting tickets (hypothesis)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from service.domain.queue import Policy, Waiting, groups, house_seats, overdue, spread

NOW = 1_000.0
POLICY = Policy(base_gap=2.0, widen_per_s=0.5, rematch_after_s=20.0)


def waiting(n: int, player: str | None = None, mu: float = 25.0, waited: float = 0.0, recent=()):
    return Waiting(f"t{n}", player or f"p{n}", NOW - waited, mu, frozenset(recent))


# -- examples ------------------------------------------------------------------------
def test_a_match_is_made_as_soon_as_enough_tickets_wait():
    made = groups([waiting(1), waiting(2)], 2, NOW, POLICY)
    assert [{w.ticket for w in g} for g in made] == [{"t1", "t2"}]
    assert groups([waiting(1)], 2, NOW, POLICY) == []


def test_close_strengths_are_preferred():
    tickets = [waiting(1, mu=25, waited=3), waiting(2, mu=30), waiting(3, mu=25.5)]
    (made,) = groups(tickets, 2, NOW, Policy(base_gap=10))
    assert {w.ticket for w in made} == {"t1", "t3"}


def test_the_accepted_gap_widens_with_waiting_time():
    far = [waiting(1, mu=20, waited=0), waiting(2, mu=30, waited=0)]
    assert groups(far, 2, NOW, POLICY) == []
    # a gap of 10 is accepted once the longest waiting has waited (10 - 2) / 0.5 = 16 s
    later = [waiting(1, mu=20, waited=16), waiting(2, mu=30, waited=0)]
    assert len(groups(later, 2, NOW, POLICY)) == 1
    assert POLICY.gap(16) == 10


def test_the_longest_waiting_ticket_is_served_first():
    tickets = [waiting(1, waited=1), waiting(2, waited=9), waiting(3, waited=5)]
    (made,) = groups(tickets, 2, NOW, POLICY)
    assert made[0].ticket == "t2"


def test_a_player_is_never_matched_with_itself():
    tickets = [waiting(1, player="ada"), waiting(2, player="ada")]
    assert groups(tickets, 2, NOW, POLICY) == []


def test_recent_opponents_are_not_paired_again_while_others_wait():
    ada = waiting(1, player="ada", recent={"bob"})
    bob = waiting(2, player="bob", recent={"ada"})
    cy = waiting(3, player="cy", mu=25.4)
    (made,) = groups([ada, bob, cy], 2, NOW, POLICY)
    assert {w.player for w in made} == {"ada", "cy"}, "a stranger, though further in strength"


def test_recent_opponents_meet_again_only_after_a_wait():
    ada = waiting(1, player="ada", recent={"bob"})
    bob = waiting(2, player="bob", recent={"ada"})
    assert groups([ada, bob], 2, NOW, POLICY) == []
    ada = waiting(1, player="ada", recent={"bob"}, waited=20)
    assert len(groups([ada, bob], 2, NOW, POLICY)) == 1


def test_bots_fill_for_tickets_that_waited_bot_after_s():
    tickets = [waiting(1, waited=31), waiting(2, waited=5)]
    assert [w.ticket for w in overdue(tickets, NOW, 30)] == ["t1"]
    assert overdue(tickets, NOW, None) == []


def test_house_bots_of_the_closest_strength():
    bots = {"random": 12.0, "greedy": 24.0, "mcts": 31.0}
    assert house_seats(bots, 1, 26.0) == ["greedy"]
    assert house_seats(bots, 2, 30.0) == ["mcts", "greedy"]
    assert house_seats(bots, 4, 30.0) is None


# -- properties ------------------------------------------------------------------------
tickets_strategy = st.lists(
    st.tuples(
        st.integers(0, 12),  # player (repeats: a player's several tickets)
        st.floats(0, 50, allow_nan=False),  # mu
        st.floats(0, 120, allow_nan=False),  # waited
        st.sets(st.integers(0, 12), max_size=4),  # recent opponents
    ),
    max_size=40,
).map(
    lambda rows: [
        Waiting(f"t{n}", f"p{p}", NOW - w, mu, frozenset(f"p{r}" for r in recent if r != p))
        for n, (p, mu, w, recent) in enumerate(rows)
    ]
)


@settings(max_examples=300, deadline=None)
@given(tickets_strategy, st.integers(1, 5))
def test_every_match_seats_distinct_players_within_the_gap(tickets, size):
    made = groups(tickets, size, NOW, POLICY)
    seen: set[str] = set()
    for group in made:
        assert len(group) == size
        assert len({w.player for w in group}) == size, "never a player twice"
        assert not seen & {w.ticket for w in group}, "a ticket in one match at most"
        seen |= {w.ticket for w in group}
        oldest = max(NOW - w.joined for w in group)
        assert spread([w.mu for w in group]) <= POLICY.gap(oldest) + 1e-9
        if NOW - group[0].joined < POLICY.rematch_after_s:
            for a, b in itertools.combinations(group, 2):
                assert b.player not in a.recent and a.player not in b.recent


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(1, 5), st.floats(0, 50, allow_nan=False))
def test_players_of_one_strength_are_all_matched_but_the_remainder(n, size, mu):
    tickets = [waiting(i, mu=mu, waited=i) for i in range(n)]
    made = groups(tickets, size, NOW, POLICY)
    assert len(made) == n // size


@settings(max_examples=200, deadline=None)
@given(tickets_strategy, st.integers(2, 4))
def test_a_match_is_made_whenever_enough_compatible_strangers_wait(tickets, size):
    """Nothing is left waiting that could make a match among itself with
    every gap wide open and no recent opponents."""
    wide = Policy(base_gap=float("inf"))
    strangers = [Waiting(w.ticket, w.player, w.joined, w.mu) for w in tickets]
    made = groups(strangers, size, NOW, wide)
    used = {w.ticket for g in made for w in g}
    left_players = {w.player for w in strangers if w.ticket not in used}
    assert len(left_players) < size
