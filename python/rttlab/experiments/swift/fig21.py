"""Swift Fig. 21 (§5.5): 5000 flows to one receiver (Table 3's incast; fair share 10 Mbps):
Jain's index of the flows' throughput with and without flow-based target scaling."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from .t1 import jain
from .t1 import points as t1_points
from .table3 import overrides, plan

PAPER_JAIN = 0.91
WITH, WITHOUT, ISEKAI = "with flow scaling", "without flow scaling", "with flow scaling, fs_min_cwnd 0.1 (isekai)"


def points(quick: bool) -> list[Point]:
    cells = [
        ({"scaling": WITH}, overrides(0.001)),
        ({"scaling": WITHOUT}, overrides(0.001, flow_scaling=False)),
        ({"scaling": ISEKAI}, overrides(0.001, fs_min_cwnd=0.1)),
    ]
    return t1_points("swift-incast-5000", cells, plan(quick))


@styled
def plot(rates: dict[str, np.ndarray]) -> Any:
    fig, (a,) = subplots(1, width=3.6, height=2.5)
    for label, x in rates.items():
        x = np.sort(x)
        a.plot(x, np.arange(1, len(x) + 1) / len(x), label=label)
    a.axvline(50e3 / 5000, color="0.6", linestyle=":", label="fair share")
    a.set(xlabel="Flow throughput (Mbps)", ylabel="CDF", xscale="symlog")
    a.legend(loc="lower right")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    rates = {r.labels["scaling"]: r.result.flows.goodput_gbps.to_numpy() * 1e3 for r in runs}
    rtt = {r.labels["scaling"]: r.result.summary["rtt_avg_us"] for r in runs}
    j = {k: jain(v) for k, v in rates.items()}
    w, wo, isekai = j[WITH], j[WITHOUT], j[ISEKAI]
    spread = {k: np.percentile(v, 90) / max(np.percentile(v, 10), 1e-9) for k, v in rates.items()}
    checks = [
        Check("with flow-based scaling Jain's index is high (≥ 0.85)", w >= 0.85, f"{w:.3f}"),
        Check("without it fairness is worse (lower Jain's index)", wo < w, f"{wo:.3f} vs {w:.3f}"),
    ]
    table = pd.DataFrame(
        [ref_row(f"Jain's index {k}", "", v, PAPER_JAIN if k == WITH else None) for k, v in j.items()]
        + [ref_row(f"p90/p10 of flow throughput, {k}", "×", v, None) for k, v in spread.items()]
        + [ref_row(f"average RTT, {k}", "µs", v, 110.2 if k == WITH else None) for k, v in rtt.items()]
    )
    discussion = (
        f"Jain's index over the 5000 flows' throughput in the measured window: {w:.3f} with flow-based scaling, "
        f"{wo:.3f} without (paper 0.91 with). The fair window is about 0.02 packets, so scaling separates the flows "
        "only if its range reaches below that: the paper profile scales down to the window floor, 0.001 packets. With "
        f"isekai's fs_min_cwnd = 0.1 every window is below the range, gets the full fs_range, and scaling only raises "
        f"all targets alike: Jain's index {isekai:.3f}, average RTT {rtt[ISEKAI]:.0f} µs (against {rtt[WITH]:.0f} µs). "
        "Below one packet a flow gains a whole packet on one ACK under target and halves on one above it, so windows "
        "spread widely without the scaling's pull towards the slow flows."
    )
    return Outcome(
        figure=plot(rates),
        table=table,
        checks=checks,
        data={"jain": pd.DataFrame([{"scaling": k, "jain": v, "rtt_avg_us": rtt[k]} for k, v in j.items()])},
        discussion=discussion,
    )


register(
    Experiment(
        name="swift-fig21",
        group="swift",
        title="Fig. 21: 5000-flow fairness with and without flow-based scaling",
        paper="5000 flows share one 50 Gbps link (fair share 10 Mbps): Jain's index 0.91 with flow-based scaling; the throughput range is wider without it.",
        points=points,
        analyse=analyse,
    )
)
