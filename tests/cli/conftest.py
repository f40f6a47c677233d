"""A test that hangs fails instead of hanging the suite.

Every read of a child's output and every wait has its own deadline; this is
the net under the ones that have none (a blocking call into something that
never answers). The Python binding's suite spreads the same net
(python/tests/conftest.py takes it from here)."""

from __future__ import annotations

import signal
from typing import Iterator

import pytest

# Far above the slowest test of either suite (about 15 s on an idle machine): only a hang
# reaches it.
HANG_SECONDS = 300


@pytest.fixture(autouse=True)
def a_hang_fails_the_test() -> Iterator[None]:
    """A test that hangs fails instead of hanging the suite: SIGALRM interrupts a
    blocking call in the main thread (zkrecipes' own waits look at signals every 50 ms)."""

    def hung(signum: int, frame: object) -> None:
        pytest.fail(f"still running after {HANG_SECONDS} s: the test hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
