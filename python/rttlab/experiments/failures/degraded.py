"""`failures-degraded`: one core link runs at a quarter of its rate (an optics fault that drops
lanes) under WebSearch load on a fat-tree with DCTCP. Per-flow ECMP keeps sending it its equal
share; weighted ECMP (`routing.weights = "capacity"`) sends it a share by its rate; adaptive
routing sees its queue; spraying puts a share of every connection through it. The p99 FCT
slowdown per routing mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from ..multipath.common import DCTCP, ROUTING, small_flow_p99
from .common import FULL, QUICK, core_link, scenario

FRACTION = 0.25
CASES: dict[str, dict[str, Any]] = {
    "ECMP": ROUTING["ECMP"],
    "weighted ECMP": {**ROUTING["ECMP"], "weights": "capacity"},
    "adaptive": ROUTING["adaptive"],
    "spraying": ROUTING["spraying"],
}
SMALL_BYTES = 100_000


def points(quick: bool) -> list[Point]:
    k = (QUICK if quick else FULL)[0]
    out = []
    for case, routing in CASES.items():
        settings: dict[str, Any] = {**DCTCP, "routing": routing}
        settings["faults"] = [{"at": "0s", "link": core_link(k), "kind": "degrade", "fraction": FRACTION}]
        out.append(Point({"case": case}, scenario(f"failures-degraded {case}", settings, quick)))
    return out


def measured(runs: list[Run], quick: bool) -> pd.DataFrame:
    k = (QUICK if quick else FULL)[0]
    rows = []
    for r in runs:
        t = r.result.tables
        slow = t["ports"][t["ports"].port.astype(str) == core_link(k)]
        computed = {
            "small_p99_slowdown": small_flow_p99(t["fct"], SMALL_BYTES),
            "slow_link_utilization": float(slow.utilization.sum()),
            "slow_link_queue_max_kb": float(slow.queue_max_kb.max()),
        }
        rows.append(summary_row(r, ["slowdown_p99", "drops", "reordered"], **computed))
    return pd.DataFrame(rows)


@styled
def plot(d: pd.DataFrame) -> Any:
    """p99 slowdown, all flows and the small ones, per routing mode."""
    fig, ax = subplots(2, 1, width=7.0, height=2.4)
    x = np.arange(len(d))
    for a, (col, label) in zip(
        ax, [("slowdown_p99", "p99 slowdown, all flows"), ("small_p99_slowdown", "p99 slowdown, ≤ 100 KB")]
    ):
        a.bar(x, d[col])
        a.set_xticks(x, d.case, fontsize=7)
        a.set(ylabel=label)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs, quick)
    v = d.set_index("case")
    e, w, a = v.loc["ECMP"], v.loc["weighted ECMP"], v.loc["adaptive"]
    checks = [
        Check(
            "Weighted ECMP lowers the p99 slowdown against ECMP: the slow link gets its share by rate",
            bool(w.slowdown_p99 < e.slowdown_p99),
            f"p99 slowdown {e.slowdown_p99:.1f} under ECMP, {w.slowdown_p99:.1f} weighted; the slow link "
            f"{e.slow_link_utilization:.0%} and {w.slow_link_utilization:.0%} busy",
        ),
        Check(
            "Adaptive routing, which sees the slow link's queue, lowers it against ECMP",
            bool(a.slowdown_p99 < e.slowdown_p99),
            f"p99 slowdown {a.slowdown_p99:.1f} adaptive; the slow link's queue peaks at "
            f"{a.slow_link_queue_max_kb:.0f} KB against {e.slow_link_queue_max_kb:.0f} KB under ECMP",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{c}: {q}", u, v.loc[c][col], None)
            for c in CASES
            for q, u, col in [
                ("p99 slowdown", "", "slowdown_p99"),
                ("p99 slowdown, ≤ 100 KB", "", "small_p99_slowdown"),
                ("slow link utilization (of the rate it runs at)", "", "slow_link_utilization"),
                ("slow link queue peak", "KB", "slow_link_queue_max_kb"),
            ]
        ]
    )
    k, rate, warm, meas = QUICK if quick else FULL
    discussion = (
        f"A k = {k} fat-tree at {rate} under DCTCP (RACK, an ACK per packet), WebSearch flow sizes at 50 % load, "
        f"{warm + meas:g} ms with {warm:g} ms warm-up; the link {core_link(k)} runs at {FRACTION:.0%} of its rate in both "
        "directions throughout. Its switch's equal-cost group keeps it: ECMP gives it an equal share of hashes; weighted ECMP "
        "a share by the rate it runs at; adaptive routing the packets its queue allows; spraying an equal share of every "
        "connection's packets, so every connection through that switch meets the slow link. No paper publishes these "
        "numbers on this fabric: the checks ask for the direction the mechanisms predict."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"degraded": d}, discussion=discussion)


register(
    Experiment(
        name="failures-degraded",
        group="failures",
        title="One core link at a quarter of its rate: p99 FCT under ECMP, weighted ECMP, adaptive routing and spraying",
        paper="Degraded links (optics faults that lower a link's rate) are a common gray failure; what each routing mode does with one.",
        points=points,
        analyse=analyse,
    )
)
