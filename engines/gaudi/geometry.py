"""The hex geometry of the Gaudí pavement (RULES.md §3, "Geometry").

Hexes use axial coordinates ``(q, r)``. Drawn pointy-top, ``q`` grows to the
east and ``r`` to the south-east; the six neighbours of ``(q, r)`` are
``(q±1, r)``, ``(q, r±1)``, ``(q+1, r-1)`` and ``(q-1, r+1)``.

An *animal site* is a triple of mutually adjacent hexes
``{(q, r), (q+1, r), (q, r+1)}``, named by its anchor ``(q, r)``: the corner
where a hex meets its east and south-east neighbours. Its animal is fixed by
the board: ``ANIMALS[(q - r) % 3]``. Every hex lies in exactly three sites
(anchored at ``(q, r)``, ``(q-1, r)`` and ``(q, r-1)``: its lower-right,
lower-left and top corners), one of each animal, so a tile's rotation follows
from its position. Two adjacent hexes share exactly one site.

Everything here is pure arithmetic on tuples; the rules module turns the
JSON state into these tuples.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

Hex = tuple[int, int]

ANIMALS: tuple[str, str, str] = ("starfish", "snail", "jellyfish")
NEIGHBOUR_OFFSETS: tuple[Hex, ...] = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))


def neighbours(hex_: Hex) -> list[Hex]:
    """The six hexes sharing an edge with ``hex_``."""
    q, r = hex_
    return [(q + dq, r + dr) for dq, dr in NEIGHBOUR_OFFSETS]


def are_adjacent(a: Hex, b: Hex) -> bool:
    """Whether two hexes share an edge."""
    return (b[0] - a[0], b[1] - a[1]) in NEIGHBOUR_OFFSETS


def site_hexes(anchor: Hex) -> tuple[Hex, Hex, Hex]:
    """The three hexes of the site anchored at ``anchor``: ``(q,r), (q+1,r), (q,r+1)``."""
    q, r = anchor
    return ((q, r), (q + 1, r), (q, r + 1))


def site_animal(anchor: Hex) -> int:
    """The index in ANIMALS of the site's animal: ``(q - r) mod 3``."""
    return (anchor[0] - anchor[1]) % 3


def sites_of(hex_: Hex) -> tuple[Hex, Hex, Hex]:
    """The anchors of the three sites holding ``hex_``, indexed by animal.

    ``sites_of(h)[a]`` is the site where a tile on ``h`` shows its third of
    animal ``a``: the tile's rotation follows from its position.
    """
    q, r = hex_
    own = (q - r) % 3
    by_animal: list[Hex] = [(0, 0)] * 3
    by_animal[own] = (q, r)
    by_animal[(own - 1) % 3] = (q - 1, r)
    by_animal[(own + 1) % 3] = (q, r - 1)
    return (by_animal[0], by_animal[1], by_animal[2])


def shared_sites(a: Hex, b: Hex) -> set[Hex]:
    """The anchors of the sites holding both hexes (exactly one when adjacent)."""
    return set(sites_of(a)) & set(sites_of(b))


def is_completed(anchor: Hex, filled: Collection[Hex] | Mapping[Hex, object]) -> bool:
    """A site is a completed animal when its three hexes are filled."""
    return all(h in filled for h in site_hexes(anchor))


def frontier(filled: Collection[Hex] | Mapping[Hex, object]) -> set[Hex]:
    """The empty hexes touching at least one filled hex."""
    return {n for h in filled for n in neighbours(h) if n not in filled}


def is_connected(hexes: Iterable[Hex]) -> bool:
    """Whether the hexes form one edge-connected group."""
    remaining = set(hexes)
    if not remaining:
        return True
    stack = [remaining.pop()]
    while stack:
        current = stack.pop()
        for n in neighbours(current):
            if n in remaining:
                remaining.remove(n)
                stack.append(n)
    return not remaining


def is_compact(hexes: Collection[Hex]) -> bool:
    """Whether the group holds three mutually adjacent hexes (a compact block)."""
    group = list(hexes)
    return any(
        are_adjacent(a, b) and are_adjacent(b, c) and are_adjacent(a, c)
        for i, a in enumerate(group)
        for j, b in enumerate(group[i + 1 :], i + 1)
        for c in group[j + 1 :]
    )
