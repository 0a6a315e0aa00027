"""`multipath-plb`: Protective Load Balancing's headline (Qureshi et al., SIGCOMM'22, §5: across
Google's fleet, the utilization imbalance of busy ToR uplinks fell 60 %, drops 33 % and the p99
latency of small RPCs 20–25 %) on a k = 8 fat-tree with WebSearch traffic under DCTCP and Swift,
per-flow ECMP against PLB. PLB's rounds and threshold decide how often it acts and the paper
gives no single value for them: Linux's TCP defaults, and a faster setting, are both run."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from .common import DCTCP, SWIFT, base, edge_uplinks, imbalance, small_flow_p99

SCHEMES = {"DCTCP": DCTCP, "Swift": SWIFT}
#: PLB off, Linux's defaults (`tcp_plb_rehash_rounds` 12, `tcp_plb_cong_thresh` 128/256), and a
#: setting that acts after three rounds with a quarter of their bytes congested.
PLB: dict[str, dict[str, Any] | None] = {
    "ECMP": None,
    "PLB (12 rounds, 50 %)": {"rounds": 12, "threshold": 0.5},
    "PLB (3 rounds, 25 %)": {"rounds": 3, "threshold": 0.25},
}
#: (k, link rate, warm-up ms, measured ms).
FULL, QUICK = (8, "100Gbps", 1.0, 4.0), (4, "25Gbps", 0.3, 1.0)
LOAD = 0.5
#: Flows up to this many bytes are the small ones whose tail PLB's paper reports.
SMALL_BYTES = 10_000
BUCKETS = ["10KB", "100KB", "1MB", "10MB"]


def scenario(scheme: str, plb: str, quick: bool) -> dict[str, Any]:
    k, rate, warm, meas = QUICK if quick else FULL
    s = base(f"multipath-plb {scheme} {plb}", k, rate, warm, meas)
    s["workloads"] = [{"kind": "flow_sizes", "cdf": "websearch", "load": LOAD}]
    s["measure"] = {"fct_buckets": BUCKETS}
    for key, value in SCHEMES[scheme].items():
        set_key(s, key, copy.deepcopy(value))
    if PLB[plb] is not None:
        set_key(s, "cc.plb", PLB[plb])
    return s


def points(quick: bool) -> list[Point]:
    return [Point({"scheme": s, "plb": p}, scenario(s, p, quick)) for s in SCHEMES for p in PLB]


def measured(runs: list[Run], quick: bool) -> pd.DataFrame:
    k = (QUICK if quick else FULL)[0]
    rows = []
    for r in runs:
        t, s = r.result.tables, r.result.summary
        rows.append(
            {
                **r.labels,
                "uplink_imbalance": imbalance(edge_uplinks(t["ports"], k)),
                "drops": s["drops"],
                "small_p99_slowdown": small_flow_p99(t["fct"], SMALL_BYTES),
                "slowdown_p99": s["slowdown_p99"],
                "repaths": s["repaths"],
                "reordered": s["reordered"],
                "throughput_gbps": s["throughput_gbps"],
            }
        )
    return pd.DataFrame(rows)


#: The settings as the figure's axis names them.
SHORT = {"ECMP": "ECMP", "PLB (12 rounds, 50 %)": "PLB 12, 50 %", "PLB (3 rounds, 25 %)": "PLB 3, 25 %"}


@styled
def plot(d: pd.DataFrame) -> Any:
    """Imbalance, repaths and the small flows' tail per PLB setting (drops are in the table)."""
    fig, ax = subplots(3, 1, width=7.0, height=2.2)
    panels = [
        ("uplink_imbalance", "ToR uplink imbalance"),
        ("repaths", "repaths"),
        ("small_p99_slowdown", "p99 slowdown, ≤ 10 KB"),
    ]
    for a, (col, label) in zip(ax, panels):
        for i, (scheme, g) in enumerate(d.groupby("scheme", sort=False)):
            a.bar(np.arange(len(g)) + 0.4 * i, g[col], width=0.4, label=scheme)
        a.set_xticks(np.arange(len(PLB)) + 0.2, [SHORT[p] for p in PLB], fontsize=6)
        a.set(ylabel=label)
    ax[1].legend(fontsize=7, frameon=False, loc="upper left")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs, quick)
    v = d.set_index(["scheme", "plb"])
    checks = []
    for scheme in SCHEMES:
        e = v.loc[(scheme, "ECMP")]
        plbs = [p for p in PLB if PLB[p] is not None]
        best = min(plbs, key=lambda p: v.loc[(scheme, p)].uplink_imbalance)
        b = v.loc[(scheme, best)]
        checks.append(
            Check(
                f"{scheme}: PLB lowers the ToR uplinks' utilization imbalance (the paper: by 60 %)",
                bool(b.uplink_imbalance < e.uplink_imbalance),
                f"ECMP {e.uplink_imbalance:.3f}, "
                + ", ".join(
                    f"{p} {v.loc[(scheme, p)].uplink_imbalance:.3f} ({v.loc[(scheme, p)].repaths:.0f} repaths)"
                    for p in plbs
                ),
            )
        )
        checks.append(
            Check(
                f"{scheme}: PLB does not raise drops or the small flows' p99 slowdown (the paper: −33 % and −20 to −25 %)",
                bool(b.drops <= e.drops and b.small_p99_slowdown <= e.small_p99_slowdown * 1.05),
                f"with {best}: drops {e.drops:.0f} → {b.drops:.0f}, small-flow p99 slowdown {e.small_p99_slowdown:.2f} → {b.small_p99_slowdown:.2f}",
            )
        )
    table = pd.DataFrame(
        [
            ref_row(f"{s}, {p}: {q}", u, v.loc[(s, p)][c], paper)
            for s in SCHEMES
            for p in PLB
            for q, u, c, paper in [
                ("ToR uplink imbalance", "", "uplink_imbalance", None),
                ("drops", "", "drops", None),
                ("small-flow p99 slowdown", "", "small_p99_slowdown", None),
                ("repaths", "", "repaths", None),
            ]
        ]
    )
    k, rate, warm, meas = QUICK if quick else FULL
    discussion = (
        f"A k = {k} fat-tree at {rate}, WebSearch flow sizes at {LOAD:.0%} load to uniformly random hosts, "
        f"{warm + meas:g} ms with {warm:g} ms warm-up. Imbalance is PLB's: per ToR, the spread of its uplinks' bytes over "
        "the busiest one's, averaged over ToRs. The paper's figures are fleet-wide changes, not a setting one can rebuild: "
        "the checks ask for their direction. A repath moves a connection whose data is in flight, so it may reorder "
        "(the window transport's RACK rides through it; the data file counts reordered packets). PLB's rounds and "
        "threshold decide how often it acts: both settings are shown."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"plb": d}, discussion=discussion)


register(
    Experiment(
        name="multipath-plb",
        group="multipath",
        title="PLB on a fat-tree under WebSearch: ToR uplink imbalance, drops and small-flow tails, ECMP against PLB",
        paper=(
            "PLB (SIGCOMM 2022) §5: deployed with DCTCP and Swift across Google's fleet, PLB cut the utilization imbalance "
            "of busy ToR uplinks by 60 %, packet drops by 33 % and p99 small-RPC latency by 20–25 %."
        ),
        points=points,
        analyse=analyse,
    )
)
