"""zkrecipes from Python: uncontended acquire + release (binding overhead vs Rust),
and the scale workloads (lock objects made and dropped, locks held at once)."""

import os
import sys

import zkrecipes
from common import bursts, held, herd, objects, warmup

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
root = f"/bench/py-{os.getpid()}"
with zkrecipes.Client(connect) as client:
    if workload == "cycle":
        lock = client.write_lock(f"{root}/cycle")
        for _ in range(warmup()):
            lock.acquire()
            lock.release()

        def cycle() -> None:
            lock.acquire()
            lock.release()

        bursts(n, cycle)
    elif workload == "objects":
        objects(n, lambda i: client.write_lock(f"{root}/objects/l-{i}"))
    elif workload == "held":
        held(n, lambda i: client.write_lock(f"{root}/held/l-{i}"))
    elif workload == "herd":
        clients = [client] + [zkrecipes.Client(connect) for _ in range(9)]
        herd(n, client.write_lock(f"{root}/herd"), lambda i: clients[i % 10].write_lock(f"{root}/herd"))
    else:
        raise SystemExit(f"unknown workload {workload}")
