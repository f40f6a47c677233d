"""zkrecipes from Python: uncontended acquire + release (binding overhead vs Rust),
and the scale workloads (lock objects made and dropped, locks held at once)."""

import os
import sys

import zkrecipes
from common import bursts, cycle_of, held, herd, objects

workload, connect = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
root = f"/bench/py-{os.getpid()}"
with zkrecipes.Client(connect) as client:
    if workload == "cycle":
        bursts(n, cycle_of(client.write_lock(f"{root}/cycle")))
    elif workload == "objects":
        objects(n, lambda i: client.write_lock(f"{root}/objects/l-{i}"))
    elif workload == "held":
        held(n, lambda i: client.write_lock(f"{root}/held/l-{i}"))
    elif workload == "herd":
        clients = [client] + [zkrecipes.Client(connect) for _ in range(9)]
        herd(n, client.write_lock(f"{root}/herd"), lambda i: clients[i % 10].write_lock(f"{root}/herd"))
    else:
        raise SystemExit(f"unknown workload {workload}")
