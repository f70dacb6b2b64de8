"""The garbage collector of a server process that holds thousands of streams.

CPython makes a full collection (every tracked object walked) whenever the
objects promoted to its oldest generation since the last one reach a
quarter of those already there. A worker following 5,000 event streams
holds about a million long-lived objects (each stream's greenlet,
generators, request), and every wake-up of a stream promotes a few that
die soon after (its wait's timer, the batch it sends): under
``python -m bench.streams --streams 10000`` a full collection came every
6 s or so in each worker and held it 0.3 to 0.6 s, so that every request
and delivery of that worker waited for it (deliveries' p99 660 to 880 ms).

So the workers keep CPython's young collections as they are (they reclaim
the reference cycles that requests leave behind: werkzeug's URL matcher
makes one per request) and make a full collection only after
``FULL_AFTER`` collections of the middle generation instead of 10 (still
only under the quarter rule): at 500 requests a second that is one every
quarter of an hour or so, and an idle worker makes none. What dies in
cycles after reaching the oldest generation (rare: a closed stream's
objects are freed by reference counting) waits for that collection.
"""

from __future__ import annotations

import gc

FULL_AFTER = 1000  # collections of the middle generation between two full ones (CPython: 10)


def settle() -> None:
    """Once the app is loaded: move what is there out of the collector's
    sight (the app is some 66,000 objects that live as long as the
    process), and make full collections rare."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_AFTER)
