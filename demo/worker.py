"""A demo worker in Python: election member, producer when leading, consumer always."""

import os
import socket
import sys
import threading
import time

import zkrecipes

connect, root, name, ledger_addr, session_timeout = sys.argv[1:6]


class Ledger:
    def __init__(self, address: str) -> None:
        host, port = address.split(":")
        self.sock = socket.create_connection((host, int(port)))
        self.reader = self.sock.makefile("r")
        self.lock = threading.Lock()

    def ask(self, line: str) -> str:
        with self.lock:
            self.sock.sendall((line + "\n").encode())
            return self.reader.readline().strip()


ledger = Ledger(ledger_addr)
ledger.ask(f"HELLO {name} {os.getpid()}")
client = zkrecipes.Client(connect, session_timeout=float(session_timeout), identity=name)
lock = client.write_lock(f"{root}/lock")
audit = client.read_write_lock(f"{root}/audit")
# At least once: a job whose worker dies is delivered again to another.
jobs = client.work_queue(f"{root}/jobs")
election = client.leader_election(f"{root}/election", name)
leading = threading.Event()


def on_election(event: zkrecipes.Event[zkrecipes.ElectionEvent]) -> None:
    if event.kind is zkrecipes.ElectionEvent.ELECTED_COMPLETE:
        ledger.ask(f"LEADER {name}")
        leading.set()


def produce() -> None:
    leading.wait()
    while ledger.ask("DONE?") == "NO":
        n = int(ledger.ask(f"NEXT {len(jobs)}"))
        if n < 0:
            time.sleep(0.2)
            continue
        jobs.offer(f"job-{n}".encode())
        ledger.ask(f"OFFERED {n}")
        time.sleep(0.01)


def audit_loop() -> None:
    while ledger.ask("DONE?") == "NO":
        time.sleep(1.0)
        if leading.is_set():
            with audit.read_lock():
                ledger.ask(f"AUDIT {name}")
                time.sleep(0.05)
                ledger.ask(f"AUDITED {name}")


election.add_listener(on_election)
election.start()
threading.Thread(target=produce, daemon=True).start()
threading.Thread(target=audit_loop, daemon=True).start()
while ledger.ask("DONE?") == "NO":
    delivery = jobs.consume(timeout=0.5)
    if delivery is None:
        continue
    with delivery:  # acknowledged once applied; given back if this raises
        job = int(delivery.data.decode().split("-")[1])
        ledger.ask(f"TAKEN {job} {name}")
        with lock:
            with audit.write_lock():
                ledger.ask(f"APPLY {job} {lock.fencing_token} {name}")
election.stop()
client.close()
