"""Python contestant: uncontended acquire + release cycles. Prints one JSON line."""

import json
import sys
import time

import zkrecipes

connect, n = sys.argv[1], int(sys.argv[2])
with zkrecipes.Client(connect) as client:
    lock = client.write_lock("/bench/python-cycle")
    for _ in range(50):
        lock.acquire()
        lock.release()
    samples = []
    started = time.perf_counter()
    for _ in range(n):
        t = time.perf_counter()
        lock.acquire()
        lock.release()
        samples.append(time.perf_counter() - t)
    total = time.perf_counter() - started
samples.sort()
print(json.dumps({
    "contestant": "python", "workload": "cycle", "n": n, "total_ms": total * 1000,
    "median_ms": samples[n // 2] * 1000, "p99_ms": samples[min(n * 99 // 100, n - 1)] * 1000,
}))
