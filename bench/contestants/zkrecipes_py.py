"""zkrecipes from Python: uncontended acquire + release (binding overhead vs Rust),
and the scale workloads (lock objects made and dropped, locks held at once)."""

import gc
import os
import sys
import time

import zkrecipes
from common import ready, result, rss, timed

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
root = f"/bench/py-{os.getpid()}"
with zkrecipes.Client(connect) as client:
    if workload == "cycle":
        lock = client.write_lock(f"{root}/cycle")
        for _ in range(50):
            lock.acquire()
            lock.release()

        def cycle() -> None:
            lock.acquire()
            lock.release()

        ready()
        timed(n, cycle)
    elif workload == "objects":
        ready()
        started = time.perf_counter()
        gc.collect()
        before = rss()
        locks = [client.write_lock(f"{root}/objects/l-{i}") for i in range(n)]
        peak = rss()
        del locks
        gc.collect()
        after = rss()
        result(n, time.perf_counter() - started, bytes_per_object=(peak - before) / n,
               retained_mb=(after - before) / 1e6)
    elif workload == "held":
        locks = [client.write_lock(f"{root}/held/l-{i}") for i in range(n)]
        ready()
        started = time.perf_counter()
        gc.collect()
        before = rss()
        for lock in locks:
            lock.acquire()
        held = rss()
        result(n, time.perf_counter() - started, bytes_per_held_lock=(held - before) / n)
        for lock in locks:
            lock.release()
    else:
        raise SystemExit(f"unknown workload {workload}")
