"""kazoo's ``Barrier`` and ours on one path, both ways: the node's existence is the whole
contract, so each library's removal releases the other's waiters."""

from __future__ import annotations

import threading
from typing import Iterator

import pytest

import zkrecipes

kazoo_client = pytest.importorskip("kazoo.client")
kazoo_barrier = pytest.importorskip("kazoo.recipe.barrier")


@pytest.fixture
def kz(zk_connect: str) -> Iterator[object]:
    kz = kazoo_client.KazooClient(hosts=zk_connect)
    kz.start(20)
    yield kz
    kz.stop()
    kz.close()


def test_a_kazoo_barrier_holds_and_releases_our_waiter(client: zkrecipes.Client, kz, path: str):
    theirs = kazoo_barrier.Barrier(kz, path)
    theirs.create()
    ours = client.barrier(path)
    assert ours.is_set() and ours.wait(0.1) is False
    released: list = []
    waiter = threading.Thread(target=lambda: released.append(ours.wait(20)))
    waiter.start()
    theirs.remove()
    waiter.join(30)
    assert released == [True]


def test_our_barrier_holds_and_releases_a_kazoo_waiter(client: zkrecipes.Client, kz, path: str):
    ours = client.barrier(path)
    ours.set()
    theirs = kazoo_barrier.Barrier(kz, path)
    assert theirs.wait(0.1) is False, "kazoo sees our barrier up"
    released: list = []
    waiter = threading.Thread(target=lambda: released.append(theirs.wait(20)))
    waiter.start()
    ours.remove()
    waiter.join(30)
    assert released == [True]
