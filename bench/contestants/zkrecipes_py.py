"""zkrecipes from Python: uncontended acquire + release (binding overhead vs Rust)."""

import os
import sys

import zkrecipes
from common import ready, timed

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
assert workload == "cycle", workload
with zkrecipes.Client(connect) as client:
    lock = client.write_lock(f"/bench/py-{os.getpid()}/cycle")
    for _ in range(50):
        lock.acquire()
        lock.release()

    def cycle() -> None:
        lock.acquire()
        lock.release()

    ready()
    timed(n, cycle)
