"""kazoo's ``Counter(support_curator=True)`` and our ``SharedCount`` on one node, both ways:
Curator's 4 bytes big-endian is the whole contract, and kazoo's empty node reads as our seed."""

from __future__ import annotations

import threading
from typing import List

import pytest

import zkrecipes

from _helpers import DEADLINE, HeardCounts

kazoo_counter = pytest.importorskip("kazoo.recipe.counter")


@pytest.fixture
def kz(make_kz):
    # Retried at once on a version conflict: kazoo's default backoff would make the race slow.
    return make_kz(command_retry={"max_tries": -1, "delay": 0.001, "backoff": 1, "max_jitter": 0.001})


def test_kazoo_increments_reach_our_listener(client: zkrecipes.Client, kz, path: str):
    ours = client.shared_count(path, seed=0)
    heard = HeardCounts()
    ours.add_listener(heard)
    with ours:
        theirs = kazoo_counter.Counter(kz, path, support_curator=True)
        theirs += 5
        heard.until_value(5)
        assert ours.count == 5
        theirs -= 2
        heard.until_value(3)
        assert ours.get() == 3 and ours.read() == 3


def test_our_writes_reach_kazoo(client: zkrecipes.Client, kz, path: str):
    with client.shared_count(path, seed=11) as ours:
        theirs = kazoo_counter.Counter(kz, path, support_curator=True)
        assert theirs.value == 11, "kazoo reads our seed"
        ours.set(-40)
        assert theirs.value == -40
        ours.add(2)
        assert theirs.value == -38
        assert ours.try_set(ours.versioned(), 2**31 - 1)
        assert theirs.value == 2**31 - 1


def test_a_node_kazoo_created_empty_reads_as_our_seed(client: zkrecipes.Client, kz, path: str):
    theirs = kazoo_counter.Counter(kz, path, support_curator=True)
    assert theirs.value == 0  # kazoo's ensure_path: an empty node, its default
    assert kz.get(path)[0] == b""
    ours = client.shared_count(path, seed=7)
    assert ours.read() == 7
    heard = HeardCounts()
    ours.add_listener(heard)
    with ours:
        assert ours.count == 7, "empty is the seed, not overwritten by start()"
        assert kz.get(path)[0] == b""
        # kazoo counts from its own default: 0 + 1, which we then follow.
        theirs += 1
        heard.until_value(1)
        ours.add(1)
        assert theirs.value == 2


def test_kazoo_and_our_adds_race_to_an_exact_total(make_client, kz, path: str):
    ours = [make_client().shared_count(path) for _ in range(2)]
    theirs = kazoo_counter.Counter(kz, path, support_curator=True)
    errors: List[BaseException] = []

    def run(step) -> None:
        try:
            for _ in range(15):
                step()
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    def kazoo_add() -> None:
        theirs.__add__(1)

    steps = [kazoo_add] + [lambda c=c: c.add(1) for c in ours]
    threads = [threading.Thread(target=run, args=(s,)) for s in steps]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert errors == []
    assert theirs.value == 45 and ours[0].read() == 45


# A bad value keeps the watch it was read with: the next good value is followed.
def test_a_count_goes_on_following_after_a_bad_value(client: zkrecipes.Client, kz, path: str):
    count = client.shared_count(path, seed=1)
    heard = HeardCounts()
    count.add_listener(heard)
    with count:
        kz.set(path, b"\x01\x02")
        kz.set(path, (9).to_bytes(4, "big"))
        assert heard.value_within(9, 15.0), f"the good value after the bad one: {heard.values}"
