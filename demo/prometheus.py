"""`demo/run.py --prometheus`: a real Prometheus scrapes every worker of the demo, and the
queries of the Grafana dashboard are asked of it once the run is over.

Each worker serves its own client's `metrics().to_prometheus()` at
http://127.0.0.1:<port>/metrics, on the port the runner hands it in ZKRECIPES_DEMO_METRICS_PORT.
The runner starts Debian's `prometheus` (one scrape a second, a static target per worker with a
`worker` label, its storage in the demo's temporary directory), and before stopping it asks
/api/v1/query_range for every query of every panel of docs/grafana/zkrecipes-dashboard.json. The
raw answers, with what the panels need to be drawn (titles, grid, units, legends), go to one JSON
file that tools/render_dashboard.py charts without any server.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict, List, Optional

# Grafana's $__rate_interval is at least four scrape intervals; a short demo run charts better
# with a window a little wider than that, which still follows the kill of the leader closely.
RATE_WINDOW = "10s"
SCRAPE_INTERVAL_SECONDS = 1
# Every value of the dashboard's `path` selector, as Grafana's "All" (allValue) sends it.
ALL_PATHS = ".*"
METRICS_PORT_VARIABLE = "ZKRECIPES_DEMO_METRICS_PORT"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def as_query(expression: str) -> str:
    """A dashboard expression as Grafana would send it for this run."""
    return expression.replace("$__rate_interval", RATE_WINDOW).replace("$path", ALL_PATHS)


class DemoPrometheus:
    """One Prometheus process scraping the workers' ports, for the length of a demo run."""

    def __init__(self, workdir: Path, targets: Dict[str, int], log: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        lines = [
            "global:",
            f"  scrape_interval: {SCRAPE_INTERVAL_SECONDS}s",
            f"  scrape_timeout: {SCRAPE_INTERVAL_SECONDS}s",
            "scrape_configs:",
            "  - job_name: zkrecipes-demo",
            "    static_configs:",
        ]
        for worker, port in targets.items():
            lines += [f"      - targets: ['127.0.0.1:{port}']", f"        labels: {{worker: '{worker}'}}"]
        config.write_text("\n".join(lines) + "\n")
        self.process: Optional[subprocess.Popen[bytes]] = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=open(log, "wb"), stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited with {self.process.returncode} before it was ready")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"prometheus was not ready within {timeout:.0f} s")

    def api(self, endpoint: str, **params: Any) -> Any:
        """One call of the HTTP API: its `data`, or an error naming the query."""
        body = urllib.parse.urlencode({k: str(v) for k, v in params.items()}).encode()
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/{endpoint}", data=body, timeout=30) as answer:
                reply = json.loads(answer.read())
        except urllib.error.HTTPError as err:
            reply = json.loads(err.read() or b"{}")
        if reply.get("status") != "success":
            raise RuntimeError(f"prometheus refused {endpoint} {params.get('query', '')!r}: {reply.get('error', reply)}")
        return reply["data"]

    def version(self) -> str:
        with urllib.request.urlopen(f"{self.url}/api/v1/status/buildinfo", timeout=10) as answer:
            return str(json.loads(answer.read())["data"]["version"])

    def last_value(self, selector: str, at: float) -> Optional[float]:
        """The sum of the last values the series of `selector` had in the run (a plain instant
        query at the end finds nothing: a target that stopped is marked stale); None if none."""
        result = self.api("query", query=f"sum(last_over_time({selector}[1h]))", time=f"{at:.3f}")["result"]
        return float(result[0]["value"][1]) if result else None

    def chart_data(self, dashboard_file: Path, start: float, end: float) -> List[Dict[str, Any]]:
        """Every panel of the dashboard with the raw range answer of each of its queries."""
        dashboard = json.loads(dashboard_file.read_text())
        panels = []
        for panel in dashboard["panels"]:
            targets = []
            for target in panel["targets"]:
                query = as_query(target["expr"])
                data = self.api("query_range", query=query, start=f"{start:.3f}", end=f"{end:.3f}",
                                step=SCRAPE_INTERVAL_SECONDS)
                targets.append({"refId": target["refId"], "expr": target["expr"], "query": query,
                                "legendFormat": target.get("legendFormat", ""), "data": data})
            panels.append({"id": panel["id"], "title": panel["title"], "description": panel.get("description", ""),
                           "gridPos": panel["gridPos"], "fieldConfig": panel.get("fieldConfig", {}),
                           "targets": targets})
        return panels

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
