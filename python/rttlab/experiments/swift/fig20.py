"""Swift Fig. 20 (§5.5): flows from different senders to one receiver are added one by one and
then torn down one by one; each phase's allocation should be tight and fair."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import Plan, interval_throughput, ref_row
from .t1 import LINE_GBPS, jain
from .t1 import points as t1_points

FLOWS = 4
FULL_PHASE_MS, QUICK_PHASE_MS = 10, 4


def phase_ms(quick: bool) -> int:
    return QUICK_PHASE_MS if quick else FULL_PHASE_MS


def flows(phase: int) -> list[dict[str, Any]]:
    """Flow i (from host 16 + i) runs from i to 2·FLOWS − 1 − i phases."""
    return [
        {"src": [16 + i], "dst": 0, "start": f"{i * phase}ms", "stop": f"{(2 * FLOWS - 1 - i) * phase}ms"}
        for i in range(FLOWS)
    ]


def points(quick: bool) -> list[Point]:
    ph = phase_ms(quick)
    p = Plan(warmup_ms=0, measured_ms=(2 * FLOWS - 1) * ph, seeds=(1,))
    return t1_points("swift-fig20", [({}, {"flows": flows(ph), "cc": {"algorithm": "swift"}})], p, timeseries="500us")


def phases(t: pd.DataFrame, ph: int) -> pd.DataFrame:
    """Per phase: the active flows' mean throughput over the phase's second half, and their Jain."""
    rows = []
    for k in range(2 * FLOWS - 1):
        active = [i for i in range(FLOWS) if i <= k <= 2 * FLOWS - 2 - i]
        window = t[(t.time_ms > (k + 0.5) * ph) & (t.time_ms <= (k + 1) * ph)]
        thr = window.groupby("flow").throughput_gbps.mean().reindex(active, fill_value=0.0)
        rows.append(
            {
                "phase": k,
                "flows": len(active),
                "jain": jain(thr),
                "total_gbps": thr.sum(),
                "min_gbps": thr.min(),
                "max_gbps": thr.max(),
            }
        )
    return pd.DataFrame(rows)


@styled
def plot(t: pd.DataFrame) -> Any:
    fig, (a,) = subplots(1, width=5.0, height=2.4)
    for f, x in t.groupby("flow"):
        a.plot(x.time_ms, x.throughput_gbps, label=f"flow {f + 1}")
    a.set(xlabel="Time (ms)", ylabel="Throughput (Gbps)", ylim=(0, LINE_GBPS * 1.1))
    a.legend(loc="upper right", ncol=2)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    ph = phase_ms(quick)
    t = interval_throughput(runs[0].result.timeseries)
    d = phases(t, ph)
    checks = [
        Check(
            "every phase is fair (Jain ≥ 0.95 among the active flows)",
            bool((d.jain >= 0.95).all()),
            ", ".join(f"{j:.3f}" for j in d.jain),
        ),
        Check(
            "every phase fills the link (≥ 90 % of 50 Gbps)",
            bool((d.total_gbps >= 0.9 * LINE_GBPS).all()),
            ", ".join(f"{x:.1f}" for x in d.total_gbps) + " Gbps",
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"phase {r.phase + 1} ({r.flows} flows): Jain", "", r.jain, None) for r in d.itertuples()]
    )
    discussion = (
        f"Over the {2 * FLOWS - 1} phases of {ph} ms, Jain's index among the active flows is {d.jain.min():.3f} at worst "
        f"and the link carries {d.total_gbps.min():.1f}–{d.total_gbps.max():.1f} Gbps. A new flow starts at one packet and "
        "climbs by one packet per RTT until its delay reaches the target; the others' decreases make room."
    )
    return Outcome(
        figure=plot(t), table=table, checks=checks, data={"throughput": t, "phases": d}, discussion=discussion
    )


register(
    Experiment(
        name="swift-fig20",
        group="swift",
        title="Fig. 20: flows added and removed share fairly",
        paper="Flows from different machines to one destination are added one at a time, then torn down one by one: the allocations are tight and fair.",
        points=points,
        analyse=analyse,
    )
)
