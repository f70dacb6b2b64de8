"""The Gaudí hex geometry on its own, proved over a large region (RULES.md §3)."""

from __future__ import annotations

import itertools

import pytest

from engines.gaudi.geometry import (
    ANIMALS,
    are_adjacent,
    frontier,
    is_compact,
    is_completed,
    is_connected,
    neighbours,
    shared_sites,
    site_animal,
    site_hexes,
    sites_of,
)

RADIUS = 25
REGION = [(q, r) for q in range(-RADIUS, RADIUS + 1) for r in range(-RADIUS, RADIUS + 1)]


def _all_sites_holding(hex_):
    """Brute force: every anchor (searched around the hex) whose site holds it."""
    q, r = hex_
    return {
        (q + dq, r + dr)
        for dq in range(-3, 4)
        for dr in range(-3, 4)
        if hex_ in site_hexes((q + dq, r + dr))
    }


def test_neighbours_are_the_six_axial_offsets():
    assert sorted(neighbours((2, -1))) == sorted(
        [(3, -1), (1, -1), (2, 0), (2, -2), (3, -2), (1, 0)]
    )


def test_adjacency_is_symmetric_and_irreflexive():
    for h in REGION:
        ns = neighbours(h)
        assert len(set(ns)) == 6
        assert h not in ns
        for n in ns:
            assert are_adjacent(n, h)
            assert h in neighbours(n)


def test_site_is_anchor_east_and_south_east_hexes():
    assert site_hexes((2, -1)) == ((2, -1), (3, -1), (2, 0))


def test_site_hexes_are_mutually_adjacent():
    for anchor in REGION:
        a, b, c = site_hexes(anchor)
        assert are_adjacent(a, b) and are_adjacent(b, c) and are_adjacent(a, c)


def test_site_animal_is_q_minus_r_mod_3():
    assert ANIMALS == ("starfish", "snail", "jellyfish")
    assert ANIMALS[site_animal((0, 0))] == "starfish"
    assert ANIMALS[site_animal((1, 0))] == "snail"
    assert ANIMALS[site_animal((0, 1))] == "jellyfish"
    assert ANIMALS[site_animal((-4, 3))] == "jellyfish"
    for q, r in REGION:
        assert site_animal((q, r)) == (q - r) % 3


def test_every_hex_lies_in_exactly_three_sites_of_three_different_animals():
    for h in REGION:
        holding = _all_sites_holding(h)
        q, r = h
        assert holding == {(q, r), (q - 1, r), (q, r - 1)}
        assert sorted(site_animal(s) for s in holding) == [0, 1, 2]


def test_sites_of_gives_the_site_of_each_animal():
    for h in REGION:
        anchors = sites_of(h)
        assert set(anchors) == _all_sites_holding(h)
        for animal, anchor in enumerate(anchors):
            assert site_animal(anchor) == animal
            assert h in site_hexes(anchor)


def test_adjacent_hexes_share_exactly_one_site():
    for h in REGION:
        for n in neighbours(h):
            assert len(shared_sites(h, n)) == 1


def test_non_adjacent_hexes_share_no_site():
    for h in REGION[:: RADIUS + 3]:
        q, r = h
        for other in [(q + dq, r + dr) for dq in range(-3, 4) for dr in range(-3, 4)]:
            if other != h and not are_adjacent(h, other):
                assert not shared_sites(h, other)


def test_only_half_of_the_corners_are_sites():
    """Each hex has six corners (mutually adjacent triples); three are animal sites."""
    for h in REGION[::7]:
        ns = neighbours(h)
        triangles = {
            frozenset((h, a, b)) for a, b in itertools.combinations(ns, 2) if are_adjacent(a, b)
        }
        assert len(triangles) == 6
        site_sets = {frozenset(site_hexes(s)) for s in sites_of(h)}
        assert site_sets <= triangles
        assert len(site_sets) == 3


def test_a_site_is_completed_when_its_three_hexes_are_filled():
    anchor = (3, -2)
    a, b, c = site_hexes(anchor)
    assert not is_completed(anchor, {a, b})
    assert not is_completed(anchor, {a, c, (9, 9)})
    assert is_completed(anchor, {a, b, c})
    assert is_completed(anchor, {a: "OGB", b: "OOO", c: "OBB"})


def test_frontier_is_the_empty_ring_around_the_filled_hexes():
    assert frontier({(0, 0)}) == set(neighbours((0, 0)))
    filled = {(0, 0), (1, 0)}
    ring = frontier(filled)
    assert len(ring) == 8
    assert not ring & filled


@pytest.mark.parametrize(
    ("hexes", "connected", "compact"),
    [
        ([(0, 0)], True, False),
        ([(0, 0), (1, 0)], True, False),
        ([(0, 0), (2, 0)], False, False),
        ([(0, 0), (1, 0), (2, 0)], True, False),
        ([(0, 0), (1, 0), (0, 1)], True, True),
        ([(1, 0), (0, 1), (1, 1)], True, True),
        ([(0, 0), (1, -1), (1, 0)], True, True),
        ([(0, 0), (1, 0), (1, 1)], True, False),
        ([(0, 0), (1, 0), (3, 0)], False, False),
    ],
)
def test_group_shapes(hexes, connected, compact):
    assert is_connected(hexes) is connected
    assert is_compact(hexes) is compact
