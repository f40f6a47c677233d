"""The command line's logs (-v, -vv, ZKRECIPES_LOG) and metrics (status --metrics,
--metrics-addr scraped by a real Prometheus), against real ZooKeeper servers."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest

from _cli_helpers import eventually

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("ZKRECIPES_CLI", str(ROOT / "target/debug/zkrecipes"))
ZK = os.environ["ZK_CONNECT"]
USAGE = 64
# CMD for a lock held until the test writes a line to it.
WAIT_FOR_A_LINE = [sys.executable, "-c", "import sys; sys.stdin.readline()"]


def unique(name: str) -> str:
    return f"/cli-observe/{name}-{uuid.uuid4().hex[:8]}"


def run(*args: str, env=None, timeout: float = 60):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ZKRECIPES_AUTH", "ZKRECIPES_LOG"))}
    return subprocess.run([CLI, "--connect", ZK, *args], capture_output=True, timeout=timeout,
                          env={**base, **(env or {})})


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def huge_head_answer(port: int) -> bytes:
    """What the endpoint answers a request whose head is 2 MB: sent whole (the server reads
    what it does not want), then read until the server closes."""
    return raw_answer(port, b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (2 << 20) + b"\r\n\r\n")


def raw_answer(port: int, request: bytes) -> bytes:
    """What the endpoint answers `request`, read until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def catalog_names() -> set[str]:
    """The Prometheus names of the catalog, from the table of docs/observability.md (which the
    core's tests hold to the catalog)."""
    names = set()
    for row in (ROOT / "docs" / "observability.md").read_text().splitlines():
        cells = [c.strip().strip("`") for c in row.split("|")[1:-1]]
        if len(cells) == 5 and cells[0].startswith("zkrecipes."):
            base = cells[0].replace(".", "_")
            if cells[1] == "histogram":
                names |= {f"{base}_seconds_{part}" for part in ("bucket", "sum", "count")}
            else:
                names.add(base + ("_total" if cells[1] == "counter" else ""))
    return names


def dashboard_queries() -> list[str]:
    dashboard = json.loads((ROOT / "docs" / "grafana" / "zkrecipes-dashboard.json").read_text())
    return [target["expr"].replace("$__rate_interval", "1m").replace("$path", ".*")
            for panel in dashboard["panels"] for target in panel["targets"]]


def test_the_dashboard_reads_only_metrics_of_the_catalog():
    known = catalog_names()
    assert "zkrecipes_lock_wait_duration_seconds_bucket" in known and "zkrecipes_requests_total" in known
    used = {name for query in dashboard_queries() for name in re.findall(r"zkrecipes_\w+", query)}
    assert used and used <= known, used - known


def test_nothing_by_default_info_with_v_and_loggers_one_by_one():
    lock = unique("levels")
    quiet = run("lock", lock, "--", "true")
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr.decode() == ""
    verbose = run("-v", "lock", lock, "--", "true")
    lines = verbose.stderr.decode().splitlines()
    assert any(" INFO  zkrecipes.session: session 0x" in l and "CONNECTED" in l for l in lines), lines
    assert not any(" DEBUG " in l for l in lines), lines
    one = run("lock", lock, "--", "true", env={"ZKRECIPES_LOG": "zkrecipes.lock=debug"})
    lines = one.stderr.decode().splitlines()
    acquired = [l for l in lines if "zkrecipes.lock:" in l and "acquired" in l]
    assert acquired and f"path={lock}" in acquired[0] and "fencing_token=" in acquired[0], lines
    assert all("zkrecipes.lock:" in l or "zkrecipes.request" not in l for l in lines), lines
    # A bare level does not undo a named logger's, whatever the order (the docs' example).
    for spec in ("zkrecipes.lock=debug,warn", "warn,zkrecipes.lock=debug"):
        lines = run("lock", lock, "--", "true", env={"ZKRECIPES_LOG": spec}).stderr.decode().splitlines()
        assert any("zkrecipes.lock:" in l and "acquired" in l for l in lines), (spec, lines)
        assert not any("zkrecipes.session:" in l for l in lines), (spec, lines)
    bad = run("lock", lock, "--", "true", env={"ZKRECIPES_LOG": "zkrecipes.nothing=debug"})
    assert bad.returncode == USAGE and "no logger" in bad.stderr.decode()


def test_status_metrics_prints_this_clients_numbers_as_text_and_json():
    done = run("status", unique("status"), "--metrics")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "# TYPE zkrecipes_requests_total counter" in text
    assert 'zkrecipes_session_state_changes_total{to="connected"} 1' in text
    as_json = run("--json", "status", unique("status"), "--metrics").stdout.decode().splitlines()
    series = [json.loads(line) for line in as_json[1:]]
    connected = [s for s in series if s["metric"] == "zkrecipes.session.state_changes"]
    assert connected == [{"metric": "zkrecipes.session.state_changes", "instrument": "counter",
                          "unit": "{change}", "attributes": {"to": "connected"}, "value": 1}]


def test_a_bad_or_busy_metrics_address_is_a_usage_error():
    assert run("--metrics-addr", "localhost", "status", "/x").returncode == USAGE
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = run("--metrics-addr", f"127.0.0.1:{port}", "status", "/x")
        assert done.returncode == USAGE and "--metrics-addr" in done.stderr.decode()


@pytest.mark.skipif(shutil.which("prometheus") is None, reason="make setup-test installs prometheus")
def test_a_real_prometheus_scrapes_a_held_lock(tmp_path: Path):
    lock = unique("scraped")
    port, prometheus_port = free_port(), free_port()
    holder = subprocess.Popen([CLI, "--connect", ZK, "--metrics-addr", f"127.0.0.1:{port}", "lock", lock, "--",
                               *WAIT_FOR_A_LINE], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        f"scrape_configs:\n  - job_name: zkrecipes\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
    )
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{prometheus_port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        def query(expression: str):
            url = f"http://127.0.0.1:{prometheus_port}/api/v1/query?query=" + urllib.parse.quote(expression)
            try:
                status, body = http_get(url)
            except OSError:
                return None
            if status != 200:
                return None
            result = json.loads(body)["data"]["result"]
            return float(result[0]["value"][1]) if result else None

        # `up` is 1 only when the scrape parsed: the text format is what Prometheus reads.
        assert eventually("a successful scrape", lambda: query('up{job="zkrecipes"}') == 1.0)
        assert query(f'zkrecipes_lock_acquisitions_total{{path="{lock}",outcome="acquired"}}') == 1.0
        assert query(f'zkrecipes_lock_holders{{path="{lock}"}}') == 1.0
        assert query(f'zkrecipes_lock_wait_duration_seconds_count{{path="{lock}"}}') == 1.0
        assert (query('sum(zkrecipes_requests_total)') or 0) >= 3
        status, _ = http_get(f"http://127.0.0.1:{port}/other")
        assert status == 404
        # A client that never finishes its request holds up nobody; a huge head gets 431, not a
        # reset connection; the endpoint goes on answering.
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stalled:
            stalled.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            assert http_get(f"http://127.0.0.1:{port}/metrics")[0] == 200
        assert huge_head_answer(port).startswith(b"HTTP/1.1 431 ")
        assert raw_answer(port, b"GET /metrics HTTP/1.1\nHost: x\n\n").startswith(b"HTTP/1.1 200 ")
        assert http_get(f"http://127.0.0.1:{port}/metrics")[0] == 200
        # Every query of the Grafana dashboard is one this Prometheus accepts.
        for expression in dashboard_queries():
            url = f"http://127.0.0.1:{prometheus_port}/api/v1/query?query=" + urllib.parse.quote(expression)
            status, body = http_get(url)
            assert status == 200 and json.loads(body)["status"] == "success", (expression, body)
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)
        holder.stdin.write(b"\n")
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0


def test_no_credential_or_key_in_a_trace_log_of_a_tls_digest_session(tmp_path: Path):
    certs = Path(os.environ["ZK_CERTS"])
    auth = tmp_path / "alice.auth"
    secret = "alice-secret"
    auth.write_text(f"alice:{secret}\n")
    key = (certs / "client-key.pem").read_text()
    key_line = next(l for l in key.splitlines() if l and not l.startswith("-----"))
    tls = ["--tls-ca", str(certs / "ca.pem"), "--tls-cert", str(certs / "client.pem"),
           "--tls-key", str(certs / "client-key.pem")]
    for connect, mechanism in [(os.environ["ZK_TLS_STRICT_CONNECT"], ["--sasl", "digest"]),
                               (os.environ["ZK_TLS_CONNECT"], [])]:
        done = subprocess.run([CLI, "-vvv", "--connect", connect, *tls, *mechanism, "--auth-file", str(auth),
                               "lock", unique("secret"), "--", "true"], capture_output=True, timeout=60,
                              env={k: v for k, v in os.environ.items() if not k.startswith("ZKRECIPES_")})
        assert done.returncode == 0, done.stderr
        log = done.stderr.decode()
        assert " DEBUG " in log, log[:2000]
        assert "zkrecipes.request" in log
        for forbidden in [secret, "alice:alice", key_line, "PRIVATE KEY"]:
            assert forbidden not in log, f"{forbidden!r} is in the debug log"
