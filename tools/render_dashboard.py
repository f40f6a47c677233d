#!/usr/bin/env python3
"""tools/render_dashboard.py RESULTS.json OUT.png: the Grafana dashboard of docs/grafana, drawn
with matplotlib from a real Prometheus's answers to its queries (`demo/run.py --prometheus`
writes RESULTS.json; `make dashboard-screenshot` runs both).

No registry this project builds from serves Grafana, so this draws what Grafana would: each
panel in its place on the dashboard's 24-column grid, with its title, its unit, one line per
series named by the target's legend format, and the run's events as annotations. Only the JSON
is read: no server is asked anything. A panel, or a series, that the run left without data says
so and why (a recipe the demo does not use, or nothing of the kind happened).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

GRID_COLUMNS = 24
# Inches of figure per unit of the grid's height (a panel of h 8 is 3.3 in tall).
INCHES_PER_ROW = 0.41
FIGURE_WIDTH = 16.0
DPI = 90
# Grafana's classic palette, darkened a little for a white background.
PALETTE = ["#629E51", "#E0A800", "#1F78C1", "#EF843C", "#E24D42", "#3AA8BF", "#BA43A9", "#705DA0",
           "#447EBC", "#C15C17", "#890F02", "#0A437C", "#6D1F62", "#584477", "#2F575E", "#99440A"]
# A series' recipe, from its metric name (zkrecipes_work_queue_..., zkrecipes_lock_...).
RECIPE_OF = re.compile(r"zkrecipes_(work_queue|[a-z]+)_")
RECIPE_NAMES = {"queue": "plain queue", "work_queue": "work queue", "latch": "leader latch",
                "election": "leader election"}
# What every client records whatever recipes it uses.
ALWAYS_RECORDED = {"session", "requests"}
NONE_HAPPENED = "none in this run"
ANNOTATION_COLOR = "#D44A3A"
# Grafana's unit ids, as the axis says them.
RATE_UNITS = {"ops": "ops/s", "reqps": "req/s"}


Series = Tuple[str, List[float], List[float]]  # legend, seconds into the run, values


def legend_of(legend_format: str, labels: Dict[str, str]) -> str:
    named = re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), legend_format).strip()
    return named or "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def series_of(target: Dict[str, Any], start: float, step: float) -> List[Series]:
    """The target's matrix as lines: a missing step is a gap (Grafana draws none across it),
    and so are NaN (a quantile of no observations) and infinities."""
    found = []
    for result in target["data"]["result"]:
        times: List[float] = []
        values: List[float] = []
        for at, text in result["values"]:
            value = float(text)
            if times and float(at) - start - times[-1] > 1.5 * step:
                times.append(times[-1] + step)
                values.append(math.nan)
            times.append(float(at) - start)
            values.append(value if math.isfinite(value) else math.nan)
        found.append((legend_of(target.get("legendFormat", ""), result["metric"]), times, values))
    return sorted(found, key=lambda s: s[0])


def why_empty(target: Dict[str, Any], recipes_used: List[str]) -> str:
    recipes = set(RECIPE_OF.findall(target["query"])) - ALWAYS_RECORDED
    unused = sorted(r for r in recipes if r not in recipes_used)
    if unused and len(unused) == len(recipes):
        return "the demo uses no " + " or ".join(RECIPE_NAMES.get(r, r) for r in unused)
    return NONE_HAPPENED


def unit_of(panel: Dict[str, Any], ref_id: str) -> Tuple[str, bool]:
    """A target's unit and whether it goes on the right axis, from the panel's field config and
    its overrides by query (Grafana's byFrameRefID matcher)."""
    config = panel.get("fieldConfig", {})
    unit = config.get("defaults", {}).get("unit", "short")
    right = False
    for override in config.get("overrides", []):
        matcher = override.get("matcher", {})
        if matcher.get("id") == "byFrameRefID" and matcher.get("options") == ref_id:
            for prop in override.get("properties", []):
                if prop["id"] == "unit":
                    unit = prop["value"]
                elif prop["id"] == "custom.axisPlacement":
                    right = prop["value"] == "right"
    return unit, right


class Scale:
    """How an axis of one unit writes its values: seconds as ms below one second (as Grafana
    scales them), rates per second, counts plain."""

    def __init__(self, unit: str, values: List[float]) -> None:
        finite = [abs(v) for v in values if math.isfinite(v)]
        top = max(finite, default=0.0)
        self.factor, self.suffix = 1.0, ""
        if unit == "s":
            self.factor, self.suffix = (1000.0, "ms") if top < 1.0 else (1.0, "s")
        elif unit in RATE_UNITS:
            self.suffix = RATE_UNITS[unit]
        self.integral = unit == "short" and all(float(v).is_integer() for v in finite)

    def text(self, value: float) -> str:
        if not math.isfinite(value):
            return "-"
        shown = value * self.factor
        number = f"{shown:.0f}" if self.integral or abs(shown) >= 100 else f"{shown:.3g}"
        return f"{number} {self.suffix}".strip()


def minutes(seconds: float, _: object = None) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


def draw_panel(fig: Any, cell: Any, panel: Dict[str, Any], run: Dict[str, Any], colors: List[str]) -> None:
    start, end, step = run["start"], run["end"], run["step_seconds"]
    plot_cell, legend_cell = cell.subgridspec(2, 1, height_ratios=[4.0, 1.3], hspace=0.32)
    ax = fig.add_subplot(plot_cell)
    ax.set_title(panel["title"], loc="left", fontsize=10.5, fontweight="bold", color="#222", pad=5)
    drawn: List[Tuple[Any, str]] = []
    empty: List[str] = []
    by_axis: Dict[bool, List[Tuple[str, Series]]] = {False: [], True: []}
    for target in panel["targets"]:
        unit, right = unit_of(panel, target["refId"])
        found = [s for s in series_of(target, start, step) if any(math.isfinite(v) for v in s[2])]
        if not found:
            name = legend_of(target.get("legendFormat", ""), {}).strip() or target["refId"]
            empty.append(f"{name}: {why_empty(target, run['recipes'])}")
        by_axis[right] += [(unit, s) for s in found]
    if not by_axis[False] and not by_axis[True]:
        ax.set_facecolor("#F4F5F5")
        ax.set_xticks([])
        ax.set_yticks([])
        reasons = sorted(set(e.split(": ", 1)[1] for e in empty))
        if len(reasons) > 1:
            lines = "\n".join(empty)
        elif reasons[0] == NONE_HAPPENED:
            lines = "the run recorded none of these"
        else:
            lines = reasons[0]
        ax.text(0.5, 0.6, "No data in this run", ha="center", va="center", fontsize=12, color="#555",
                transform=ax.transAxes)
        ax.text(0.5, 0.38, lines, ha="center", va="center", fontsize=9, color="#777", transform=ax.transAxes)
        for side in ax.spines.values():
            side.set_color("#DDD")
        fig.add_subplot(legend_cell).axis("off")
        return
    color_at = 0
    for right, entries in by_axis.items():
        if not entries:
            continue
        axis = ax.twinx() if right else ax
        scale = Scale(entries[0][0], [v for _, s in entries for v in s[2]])
        for unit, (name, times, values) in entries:
            color = colors[color_at % len(colors)]
            color_at += 1
            line, = axis.plot(times, values, color=color, linewidth=1.4)
            peak = max(v for v in values if math.isfinite(v))
            drawn.append((line, f"{name}   max {scale.text(peak)}"))
        axis.yaxis.set_major_formatter(FuncFormatter(lambda v, _, scale=scale: scale.text(v)))
        axis.yaxis.set_major_locator(MaxNLocator(nbins=5, integer=scale.integral))
        top = max((v for _, s in entries for v in s[2] if math.isfinite(v)), default=0.0)
        # A flat zero still gets an axis with a 1 on it, as Grafana draws it.
        axis.set_ylim(0, None if top > 0 else 1)
        axis.tick_params(labelsize=8, colors="#444")
        for side in axis.spines.values():
            side.set_color("#CCC")
    ax.set_xlim(0, end - start)
    ax.xaxis.set_major_formatter(FuncFormatter(minutes))
    ax.grid(True, color="#E6E6E6", linewidth=0.7)
    ax.tick_params(labelsize=8, colors="#444")
    # The run's events as Grafana's annotations: a line in every panel, named once in the header.
    for event in run.get("events", []):
        ax.axvline(event["at"] - start, color=ANNOTATION_COLOR, linestyle="--", linewidth=1)
    handles = [line for line, _ in drawn] + [Line2D([], [], color="none") for _ in empty]
    labels = [label for _, label in drawn] + [f"({e})" for e in empty]
    legend_ax = fig.add_subplot(legend_cell)
    legend_ax.axis("off")
    columns = 1 if len(labels) <= 3 else 2 if len(labels) <= 8 else 3
    legend_ax.legend(handles, labels, loc="upper left", ncol=columns, fontsize=7.5, frameon=False,
                     handlelength=1.6, columnspacing=1.5, labelspacing=0.25, borderaxespad=0.2)


def render(results: Dict[str, Any], out: Path) -> None:
    panels = results["panels"]
    run = results["run"]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in panels)
    header, footer = 1.25, 1.0
    height = rows * INCHES_PER_ROW + header + footer
    fig = plt.figure(figsize=(FIGURE_WIDTH, height), dpi=DPI, facecolor="white")
    grid = fig.add_gridspec(rows, GRID_COLUMNS, left=0.04, right=0.96, top=1 - header / height,
                            bottom=footer / height, hspace=1.6, wspace=4.5)
    for panel in panels:
        at = panel["gridPos"]
        cell = grid[at["y"]:at["y"] + at["h"], at["x"]:at["x"] + at["w"]]
        draw_panel(fig, cell, panel, run, PALETTE)
    variables = results["prometheus"]["variables"]
    seconds = run["end"] - run["start"]
    fig.text(0.04, 1 - 0.3 / height, f"{results['dashboard']['title']}", fontsize=17, fontweight="bold",
             color="#222", va="top")
    fig.text(0.04, 1 - 0.7 / height,
             f"{results['dashboard']['file']}   ·   path = All ({variables['$path']})   ·   "
             f"$__rate_interval = {variables['$__rate_interval']}   ·   the whole run, {minutes(seconds)}",
             fontsize=9, color="#555", va="top")
    annotations = "   ".join(f"- - -  {e['text']} at {minutes(e['at'] - run['start'])}" for e in run.get("events", []))
    fig.text(0.96, 1 - 0.7 / height, annotations, fontsize=9, color=ANNOTATION_COLOR, va="top", ha="right")
    languages: Dict[str, int] = {}
    for language in run["workers"].values():
        languages[language] = languages.get(language, 0) + 1
    workers = ", ".join(f"{n} {language}" for language, n in languages.items())
    events = "; ".join(f"{e['text']} at {minutes(e['at'] - run['start'])}" for e in run.get("events", []))
    version = results["prometheus"]["version"]
    caption = (
        f"Prometheus {'.'.join(version.split('.')[:2])} scrape of a `{run['command']}` run; charted with matplotlib "
        "from the panels' queries (Grafana is served by no registry this project builds from)."
        f"\nThe run: {len(run['workers'])} workers ({workers}), {run['jobs']} jobs"
        + (f"; {events}" if events else "")
        + f". Prometheus {version} scraped each worker's client.metrics() at /metrics once a second."
        f"\nDrawn by tools/render_dashboard.py with matplotlib {matplotlib.__version__} from "
        "the query_range answers that demo/run.py --prometheus saved."
    )
    fig.text(0.04, 0.72 / height, caption, fontsize=9, color="#444", va="top", linespacing=1.5)
    # A palette of 256 colours keeps the PNG small enough to commit; the chart uses far fewer.
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=DPI, facecolor="white")
    plt.close(fig)
    from PIL import Image  # matplotlib's own dependency

    raw.seek(0)
    Image.open(raw).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(out, optimize=True)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="what demo/run.py --prometheus wrote")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args(argv)
    try:
        results = json.loads(args.results.read_text())
        missing = [key for key in ("prometheus", "dashboard", "run", "panels") if key not in results]
        if missing:
            raise ValueError(f"it has no {', '.join(missing)}")
        panels = results["panels"]
    except (OSError, ValueError, TypeError) as err:
        print(f"render_dashboard: {args.results} is no results file of demo/run.py --prometheus: {err}",
              file=sys.stderr)
        return 2
    render(results, args.out)
    charted = sum(1 for p in panels if any(t["data"]["result"] for t in p["targets"]))
    print(f"{args.out}: {len(panels)} panels, {charted} with data, {args.out.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
