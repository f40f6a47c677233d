"""A test that hangs fails instead of hanging the suite.

Every read of a child's output and every wait has its own deadline; this is
the net under the ones that have none (a blocking call into something that
never answers)."""

from __future__ import annotations

import signal

import pytest

# Far above the slowest test (about 15 s on an idle machine): only a hang
# reaches it.
HANG_SECONDS = 300


@pytest.fixture(autouse=True)
def a_hang_fails_the_test():
    def hung(signum, frame):
        # SIGALRM interrupts a blocking read or wait in the main thread.
        pytest.fail(f"still running after {HANG_SECONDS} s: the test hung")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
