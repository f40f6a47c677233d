"""kazoo's ``Barrier`` and ours on one path, both ways: the node's existence is the whole
contract, so each library's removal releases the other's waiters."""

from __future__ import annotations

import pytest

import zkrecipes

from _helpers import assert_release_frees_a_waiter

kazoo_barrier = pytest.importorskip("kazoo.recipe.barrier")


def test_a_kazoo_barrier_holds_and_releases_our_waiter(client: zkrecipes.Client, kz, path: str):
    theirs = kazoo_barrier.Barrier(kz, path)
    theirs.create()
    ours = client.barrier(path)
    assert ours.is_set() and ours.wait(0.1) is False
    assert_release_frees_a_waiter(ours.wait, theirs.remove)


def test_our_barrier_holds_and_releases_a_kazoo_waiter(client: zkrecipes.Client, kz, path: str):
    ours = client.barrier(path)
    ours.set()
    theirs = kazoo_barrier.Barrier(kz, path)
    assert theirs.wait(0.1) is False, "kazoo sees our barrier up"
    assert_release_frees_a_waiter(theirs.wait, ours.remove)
