"""A demo worker in Python: election member, producer when leading, consumer always.

With ZKRECIPES_DEMO_SKIP_AUDIT_LOCK=1 (`run.py --skip-audit-lock`) it applies jobs without the
audit's write lock: the demo's ledger must then count writes during audits and fail.
With ZKRECIPES_DEMO_METRICS_PORT (`run.py --prometheus`) it serves its client's metrics there.
"""

import http.server
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


class MetricsEndpoint:
    """This client's metrics at http://127.0.0.1:<port>/metrics for the demo's Prometheus, and a
    wait for a scrape begun after the work, so that Prometheus's last sample is the final count."""

    def __init__(self, client: zkrecipes.Client, port: int) -> None:
        self.served = threading.Condition()
        self.last_scrape_began = float("-inf")
        endpoint = self

        class Scrape(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path != "/metrics":
                    self.send_error(404)
                    return
                began = time.monotonic()
                body = client.metrics().to_prometheus().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                # Counted once written: the worker may exit as soon as it is told.
                with endpoint.served:
                    endpoint.last_scrape_began = max(endpoint.last_scrape_began, began)
                    endpoint.served.notify_all()

            def log_message(self, format: str, *args: object) -> None:
                pass  # one line a second per scrape would bury the worker's own log

        server = http.server.HTTPServer(("127.0.0.1", port), Scrape)
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def await_scrape(self, timeout: float) -> bool:
        since = time.monotonic()
        with self.served:
            return self.served.wait_for(lambda: self.last_scrape_began > since, timeout)


ledger = Ledger(ledger_addr)
ledger.ask(f"HELLO {name} {os.getpid()}")
client = zkrecipes.Client(connect, session_timeout=float(session_timeout), identity=name)
metrics_port = os.environ.get("ZKRECIPES_DEMO_METRICS_PORT")
endpoint = MetricsEndpoint(client, int(metrics_port)) if metrics_port else None
lock = client.write_lock(f"{root}/lock")
audit = client.read_write_lock(f"{root}/audit")
# At least once: a job whose worker dies is delivered again to another.
jobs = client.work_queue(f"{root}/jobs")
election = client.leader_election(f"{root}/election", name)
leading = threading.Event()
stopping = threading.Event()
skip_audit_lock = os.environ.get("ZKRECIPES_DEMO_SKIP_AUDIT_LOCK") == "1"


def on_election(event: zkrecipes.Event[zkrecipes.ElectionEvent]) -> None:
    if event.kind is zkrecipes.ElectionEvent.ELECTED_COMPLETE:
        ledger.ask(f"LEADER {name}")
        leading.set()


def produce() -> None:
    while not leading.wait(0.2):
        if stopping.is_set():
            return
    while not stopping.is_set() and ledger.ask("DONE?") == "NO":
        n = int(ledger.ask(f"NEXT {len(jobs)}"))
        if n < 0:
            time.sleep(0.2)
            continue
        jobs.offer(f"job-{n}".encode())
        ledger.ask(f"OFFERED {n}")
        time.sleep(0.01)


def audit_loop() -> None:
    # stopping.wait is the interval: the loop ends at once when the worker stops.
    while not stopping.wait(1.0):
        if leading.is_set():
            with audit.read_lock() as reading:
                token = reading.fencing_token
                ledger.ask(f"AUDIT {name} {token}")
                time.sleep(0.05)
                ledger.ask(f"AUDITED {name} {token}")


def apply(job: int) -> None:
    if skip_audit_lock:
        ledger.ask(f"APPLY {job} {lock.fencing_token} {name} 0")
        return
    with audit.write_lock() as writing:
        ledger.ask(f"APPLY {job} {lock.fencing_token} {name} {writing.fencing_token}")


election.add_listener(on_election)
election.start()
helpers = [threading.Thread(target=produce), threading.Thread(target=audit_loop)]
for helper in helpers:
    helper.start()
while ledger.ask("DONE?") == "NO":
    delivery = jobs.consume(timeout=0.5)
    if delivery is None:
        continue
    with delivery:  # acknowledged once applied; given back if this raises
        job = int(delivery.data.decode().split("-")[1])
        ledger.ask(f"TAKEN {job} {name}")
        with lock:
            apply(job)
# Shutting down: stop the helpers and wait for what they have in flight (an audit holding the
# read lock, an offer) before the client closes under them.
stopping.set()
for helper in helpers:
    helper.join()
election.stop()
if endpoint is not None:
    endpoint.await_scrape(timeout=5.0)
# What this worker's own metrics say, for the demo's table (the core estimates the percentiles).
metrics = client.metrics()
lock_path = f"{root}/lock"
waits = metrics.histogram("zkrecipes.lock.wait.duration", path=lock_path)
holds = metrics.histogram("zkrecipes.lock.hold.duration", path=lock_path)
ms = lambda h, q: (h.quantile(q) or 0.0) * 1000 if h else 0.0  # noqa: E731
ledger.ask(
    f"METRICS {name} {ms(waits, 0.5):.3f} {ms(waits, 0.99):.3f} {ms(holds, 0.5):.3f} {ms(holds, 0.99):.3f} "
    f"{metrics.counter('zkrecipes.lock.acquisitions', path=lock_path, outcome='acquired')} "
    f"{metrics.counter('zkrecipes.work_queue.redeliveries')}"
)
client.close()
