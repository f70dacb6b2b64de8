"""The workers' garbage collector (service.server.collector): full collections
rare under a stream-holding load, young cycles still reclaimed.

Each case runs in a fresh interpreter, so that this test process's own
collector is left alone."""

import subprocess
import sys

# A worker in small: many long-lived objects (its streams), and a loop
# that leaves a reference cycle behind (as each request does) and holds
# something for a while (as each stream's wait does). Prints the number
# of full collections during the loop, and whether the first cycle left
# behind was reclaimed without an explicit collection.
WORKER = """
import collections, gc, sys, weakref
from service.server import collector

if sys.argv[1] == "settled":
    collector.settle()

class Node:
    pass

def cycle():
    node = Node()
    node.me = node
    return node

streams = [[{"i": i}] for i in range(200_000)]
full = []
gc.callbacks.append(
    lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None
)
first = weakref.ref(cycle())
waits = collections.deque()
for n in range(600_000):
    cycle()
    waits.append([n])
    if len(waits) > 5_000:
        waits.popleft()
print(len(full), first() is None)
"""


def run(mode: str) -> tuple[int, bool]:
    done = subprocess.run(
        [sys.executable, "-c", WORKER, mode], capture_output=True, text=True, check=True
    )
    full, reclaimed = done.stdout.split()
    return int(full), reclaimed == "True"


def test_a_settled_worker_makes_no_full_collection_under_a_stream_load():
    assert run("settled") == (0, True)


def test_cpythons_default_makes_full_collections_under_the_same_load():
    # what the settled worker avoids: without it, the same loop walks every object again and again
    full, reclaimed = run("default")
    assert full >= 3 and reclaimed
