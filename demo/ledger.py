"""The protected resource of the demo: an account that checks fencing tokens.

Workers talk to it over a line protocol on 127.0.0.1 (one request, one reply):

    HELLO <worker> <pid>            -> OK
    LEADER <worker>                 -> OK           (the worker just became leader)
    NEXT <queue size>               -> <n> | -1      (job to offer now; -1: nothing right now)
    OFFERED <n>                     -> OK
    TAKEN <job> <worker>            -> OK
    APPLY <job> <token> <worker> <audit write token> -> OK | STALE | DUP
    AUDIT <worker> <read token> / AUDITED <worker> <read token> -> OK <balance> / OK
                                    (an audit is open in between)
    DONE?                           -> YES | NO
    METRICS <worker> <lock wait p50 ms> <p99 ms> <hold p50 ms> <p99 ms> <lock acquisitions> <redeliveries>
                                    -> OK           (from the worker's own client.metrics(), as it stops)

A write during an open audit is a violation, with one exception that the fencing tokens of the
audit lock decide: an audit whose worker is gone (killed by the demo, or crashed: its connection
to the ledger closed) ends with its read lock's session, not with an AUDITED. A write whose audit
write token is above the audit's read token queued behind that read node, so it can only have
been granted once the node was gone: it closes that audit instead of counting. A write of a live
auditor's open audit, or one whose write token is below the read token (it was ahead in line, so
the audit could not have begun before it ended), still counts: a worker that writes without the
write lock is caught (`worker.py --skip-audit-lock`).

APPLY is what a real storage service would do with a fencing token: it refuses
a token lower than the highest it has accepted (a stale holder), and applies
each job once (a job re-offered by a new leader after a crash is a duplicate).

Nothing is re-offered: the jobs live in an at-least-once work queue, so a job
whose worker died before acknowledging it is delivered again to another worker
(a job applied but not acknowledged comes back too, and the account refuses it
as a duplicate).
"""

from __future__ import annotations

import socketserver
import threading
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple


@dataclass
class Ledger:
    jobs: int
    balance: int = 0
    highest_token: int = 0
    next_offer: int = 0
    applied: Set[int] = field(default_factory=set)
    applied_by: Dict[str, int] = field(default_factory=dict)
    stale: int = 0
    duplicates: int = 0
    audits: int = 0
    audit_violations: int = 0
    # Open audits: (worker, read lock fencing token) -> open count.
    auditing: Dict[Tuple[str, int], int] = field(default_factory=dict)
    # Workers whose connection closed or whom the demo killed.
    gone: Set[str] = field(default_factory=set)
    offered: Set[int] = field(default_factory=set)
    taken: Dict[int, str] = field(default_factory=dict)
    dead: Set[str] = field(default_factory=set)
    last_offer_at: float = 0.0
    leaders: List[Tuple[float, str]] = field(default_factory=list)
    workers: Dict[str, int] = field(default_factory=dict)
    events: List[str] = field(default_factory=list)
    last_holder: Optional[Tuple[str, int]] = None
    # APPLY requests per worker (a STALE or DUP one included): each was made holding the lock once.
    apply_calls: Dict[str, int] = field(default_factory=dict)
    # What each worker's metrics said as it stopped (METRICS).
    metrics: Dict[str, Tuple[float, float, float, float, int, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, line: str) -> str:
        parts = line.split()
        if not parts:
            return "ERR empty"
        cmd, args = parts[0], parts[1:]
        with self.lock:
            if cmd == "HELLO":
                self.workers[args[0]] = int(args[1])
                return "OK"
            if cmd == "LEADER":
                self.leaders.append((time.monotonic(), args[0]))
                self.events.append(f"{args[0]} is the leader")
                return "OK"
            if cmd == "NEXT":
                return str(self._next(int(args[0]) if args else -1))
            if cmd == "OFFERED":
                n = int(args[0])
                self.offered.add(n)
                self.next_offer = max(self.next_offer, n + 1)
                self.last_offer_at = time.monotonic()
                return "OK"
            if cmd == "TAKEN":
                self.taken[int(args[0])] = args[1]
                return "OK"
            if cmd == "APPLY":
                job, token, worker, audit_token = int(args[0]), int(args[1]), args[2], int(args[3])
                self.apply_calls[worker] = self.apply_calls.get(worker, 0) + 1
                if token < self.highest_token:
                    self.stale += 1
                    self.events.append(f"{worker} REJECTED: stale token {token} < {self.highest_token}")
                    return "STALE"
                self.highest_token = token
                self.last_holder = (worker, token)
                if job in self.applied:
                    self.duplicates += 1
                    return "DUP"
                if self._overlaps_audit(audit_token):
                    self.audit_violations += 1
                    self.events.append(f"{worker} wrote during an audit (audit write token {audit_token})")
                self.applied.add(job)
                self.balance += 1
                self.applied_by[worker] = self.applied_by.get(worker, 0) + 1
                return "OK"
            if cmd == "AUDIT":
                self.audits += 1
                key = (args[0], int(args[1]))
                if args[0] not in self.gone:  # a request still in flight when the demo killed it
                    self.auditing[key] = self.auditing.get(key, 0) + 1
                return f"OK {self.balance}"
            if cmd == "AUDITED":
                key = (args[0], int(args[1]))
                if self.auditing.get(key, 0) > 1:
                    self.auditing[key] -= 1
                else:
                    self.auditing.pop(key, None)
                return "OK"
            if cmd == "METRICS":
                w50, w99, h50, h99 = (float(a) for a in args[1:5])
                self.metrics[args[0]] = (w50, w99, h50, h99, int(args[5]), int(args[6]))
                return "OK"
            if cmd == "DONE?":
                return "YES" if len(self.applied) >= self.jobs else "NO"
            return f"ERR unknown command {cmd}"


    def _next(self, queue_size: int) -> int:
        # No re-offers: the work queue delivers a dead worker's jobs again by itself.
        if self.next_offer < self.jobs:
            return self.next_offer
        return -1

    def _overlaps_audit(self, audit_write_token: int) -> bool:
        overlaps = False
        for worker, read_token in list(self.auditing):
            if worker in self.gone and audit_write_token > read_token:
                # Granted behind the read node of a worker that is gone: that node went with its
                # session, and so did the audit.
                del self.auditing[(worker, read_token)]
            else:
                overlaps = True
        return overlaps

    def mark_dead(self, worker: str) -> None:
        with self.lock:
            self.dead.add(worker)
            self.gone.add(worker)

    def mark_gone(self, worker: str) -> None:
        with self.lock:
            self.gone.add(worker)


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        ledger: Ledger = self.server.ledger  # type: ignore[attr-defined]
        worker: Optional[str] = None
        try:
            for raw in self.rfile:
                line = raw.decode().strip()
                if line.startswith("HELLO "):
                    worker = line.split()[1]
                reply = ledger.handle(line)
                self.wfile.write((reply + "\n").encode())
                self.wfile.flush()
        except OSError:
            pass
        finally:
            # A worker's one connection closed: it exited or crashed, and its audit with it.
            if worker is not None:
                ledger.mark_gone(worker)


class LedgerServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, ledger: Ledger) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.ledger = ledger

    @property
    def address(self) -> str:
        host, port = self.server_address[:2]
        return f"{host}:{port}"
