"""What the command line's test modules share."""

from __future__ import annotations

import time


def eventually(what: str, check, timeout: float = 30):
    """`check()`'s first true answer, tried every 50 ms; a failure after `timeout` seconds
    (with the last answer)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")
