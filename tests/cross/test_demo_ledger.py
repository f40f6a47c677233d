"""The demo's ledger (demo/ledger.py): its audit check counts real overlaps and nothing else.

Issue 48: a Node worker that crashed inside an audit left the audit open, and every later write
counted as "a write during an audit". An audit of a worker that is gone ends with its read lock's
session; the fencing tokens of the audit lock tell a write granted after that from a real overlap.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "demo"))

from ledger import Ledger  # noqa: E402


def apply(ledger: Ledger, job: int, audit_write_token: int, worker: str = "w") -> str:
    return ledger.handle(f"APPLY {job} {100 + job} {worker} {audit_write_token}")


def violations_after(ledger: Ledger, job: int, audit_write_token: int) -> int:
    """The ledger's count of writes during an audit once `job` is applied under `audit_write_token`."""
    apply(ledger, job, audit_write_token)
    return ledger.audit_violations


def auditing(*audits: str) -> Ledger:
    """A ledger of 10 jobs with these audits open ("a 50": worker a, under its read token 50)."""
    ledger = Ledger(jobs=10)
    for audit in audits:
        assert ledger.handle(f"AUDIT {audit}").startswith("OK")
    return ledger


def test_a_write_during_a_live_audit_counts() -> None:
    ledger = auditing("a 50")
    assert violations_after(ledger, 1, audit_write_token=60) == 1
    ledger.handle("AUDITED a 50")
    assert violations_after(ledger, 2, audit_write_token=70) == 1


def test_a_writer_without_the_write_lock_is_caught_also_after_its_auditor_went() -> None:
    ledger = auditing("a 50")
    ledger.mark_gone("a")
    # Token 0: applied without the audit's write lock (worker.py --skip-audit-lock).
    assert violations_after(ledger, 1, audit_write_token=0) == 1


def test_the_audit_of_a_crashed_worker_ends_with_its_session() -> None:
    ledger = auditing("a 50")
    ledger.mark_gone("a")  # its connection closed inside the audit
    # Queued behind the dead reader's node: granted once the session took the node away.
    for job in range(5):
        apply(ledger, job, audit_write_token=60 + job)
    assert ledger.audit_violations == 0
    assert ledger.auditing == {}


def test_an_audit_killed_by_the_demo_closes_the_same_way() -> None:
    ledger = auditing("a 50")
    ledger.mark_dead("a")
    assert violations_after(ledger, 1, audit_write_token=51) == 0
    # An AUDIT still in flight when the worker was killed opens nothing.
    ledger.handle("AUDIT a 52")
    assert violations_after(ledger, 2, audit_write_token=53) == 0


def test_a_live_auditor_elsewhere_still_counts() -> None:
    ledger = auditing("a 50", "b 55")
    ledger.mark_gone("a")
    assert violations_after(ledger, 1, audit_write_token=60) == 1  # b's audit is open and b is alive
    assert ("a", 50) not in ledger.auditing
