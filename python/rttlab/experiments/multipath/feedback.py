"""`multipath-feedback`: Swift reacting to its latest RTT sample against the median of its last
five when packets are sprayed over paths of which one is slow (MSwift, 2025: a delay controller
fed samples that mix paths mishandles them, and a median over recent samples fixes it), and
against per-path state: each connection as four subflows, each on its own ECMP path with its own
Swift (`transport.subflows`, htsim's multipath Swift). A two-leaf, four-spine fabric at 100 Gbps
with one leaf–spine link at a quarter of its rate; WebSearch flows between the leaves."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from .common import SWIFT, small_flow_p99

SPINES, HOSTS_PER_LEAF = 4, 8
RATE, SLOW_FRACTION = 100, 0.25
FEEDBACK = {"latest": {"feedback": "latest"}, "median of 5": {"feedback": "median", "feedback_samples": 5}}
ROUTING = {"ECMP": {"mode": "ecmp"}, "spraying": {"mode": "spray"}, "4 subflows": {"mode": "ecmp"}}
#: Per-path state: each connection as subflows on paths of their own, each with its own Swift
#: (`transport.subflows`; htsim's multipath Swift).
SUBFLOWS = {"4 subflows": 4}
#: (warm-up ms, measured ms).
FULL, QUICK = (1.0, 9.0), (0.3, 1.2)
LOAD = 0.3
SMALL_BYTES = 100_000


def topology() -> dict[str, Any]:
    """Two leaves and four spines; the link from leaf L1 to spine S0 runs at a quarter rate."""
    hosts = [f"h{i}" for i in range(2 * HOSTS_PER_LEAF)]
    links = [{"a": h, "b": f"L{i // HOSTS_PER_LEAF}"} for i, h in enumerate(hosts)]
    for leaf in range(2):
        for spine in range(SPINES):
            link: dict[str, Any] = {"a": f"L{leaf}", "b": f"S{spine}"}
            if (leaf, spine) == (1, 0):
                link["rate"] = f"{RATE * SLOW_FRACTION:g}Gbps"
            links.append(link)
    return {
        "kind": "graph",
        "hosts": hosts,
        "switches": ["L0", "L1", *(f"S{s}" for s in range(SPINES))],
        "link_rate": f"{RATE}Gbps",
        "link_delay": "1us",
        "links": links,
    }


def scenario(feedback: str, routing: str, quick: bool) -> dict[str, Any]:
    warm, meas = QUICK if quick else FULL
    return {
        "name": f"multipath-feedback {feedback} {routing}",
        "seed": 1,
        "duration": f"{warm + meas:g}ms",
        "warmup": f"{warm:g}ms",
        "topology": topology(),
        "switch": {"buffer": "32MB", "pfc": False},
        "nic": {"mtu": "1064B"},
        "transport": {
            **copy.deepcopy(SWIFT["transport"]),
            **({"subflows": SUBFLOWS[routing]} if routing in SUBFLOWS else {}),
        },
        "cc": {"algorithm": "swift", **FEEDBACK[feedback]},
        "routing": ROUTING[routing],
        "workloads": [{"kind": "flow_sizes", "cdf": "websearch", "load": LOAD, "peers": "longest_path"}],
        "measure": {"fct_buckets": ["100KB", "1MB", "30MB"]},
    }


def points(quick: bool) -> list[Point]:
    return [Point({"routing": r, "feedback": f}, scenario(f, r, quick)) for r in ROUTING for f in FEEDBACK]


def measured(runs: list[Run]) -> pd.DataFrame:
    keys = ["slowdown_p99", "drops", "retransmits", "rtt_p99_us", "throughput_gbps"]
    return pd.DataFrame(
        [summary_row(r, keys, small_p99_slowdown=small_flow_p99(r.result.tables["fct"], SMALL_BYTES)) for r in runs]
    )


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, 1, width=4.5, height=2.4)
    for i, (fb, g) in enumerate(d.groupby("feedback", sort=False)):
        ax.bar(np.arange(len(g)) + 0.4 * i, g.slowdown_p99, width=0.4, label=f"Swift, {fb}")
    ax.set_xticks(np.arange(len(ROUTING)) + 0.2, list(ROUTING))
    ax.set(ylabel="p99 FCT slowdown")
    ax.legend(fontsize=7, frameon=False)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs)
    v = d.set_index(["routing", "feedback"])
    latest, median = v.loc[("spraying", "latest")], v.loc[("spraying", "median of 5")]
    ecmp, split = v.loc[("ECMP", "latest")], v.loc[("4 subflows", "latest")]
    checks = [
        Check(
            "under spraying with one slow path, Swift fed the median of its samples has a lower p99 FCT slowdown than fed the latest",
            bool(median.slowdown_p99 < latest.slowdown_p99),
            f"p99 slowdown: latest {latest.slowdown_p99:.2f}, median {median.slowdown_p99:.2f}; drops {latest.drops:.0f} and {median.drops:.0f}",
        ),
        Check(
            "with per-path state (four subflows, each its own Swift on its own ECMP path) the p99 FCT slowdown is below "
            "one path's (ECMP) and spraying's",
            bool(split.slowdown_p99 < min(ecmp.slowdown_p99, latest.slowdown_p99)),
            f"p99 slowdown: 4 subflows {split.slowdown_p99:.2f}, ECMP {ecmp.slowdown_p99:.2f}, spraying {latest.slowdown_p99:.2f}; "
            f"retransmissions {split.retransmits:.0f} with {split.drops:.0f} drops",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{r}, Swift {f}: {q}", u, v.loc[(r, f)][c], None)
            for r in ROUTING
            for f in FEEDBACK
            for q, u, c in [
                ("p99 FCT slowdown", "", "slowdown_p99"),
                ("drops", "", "drops"),
                ("throughput", "Gbps", "throughput_gbps"),
            ]
        ]
    )
    warm, meas = QUICK if quick else FULL
    discussion = (
        f"Two leaves of {HOSTS_PER_LEAF} hosts and {SPINES} spines, {RATE} Gbps links, the L1–S0 link at "
        f"{SLOW_FRACTION:.0%} of that; WebSearch flows at {LOAD:.0%} load from each host to a host on the other leaf, "
        f"{warm + meas:g} ms with {warm:g} ms warm-up. Random spraying sends a quarter of each leaf's packets through the "
        "slow link's spine, which holds the fabric's throughput to "
        f"{v.loc[('spraying', 'latest')].throughput_gbps:.0f} Gbps against {v.loc[('ECMP', 'latest')].throughput_gbps:.0f} "
        "under ECMP: oblivious spraying over asymmetric paths is limited by the slowest. The median is over the "
        "connection's last five samples (cc.feedback_samples). Here it filters the slow path's samples out, so Swift "
        "keeps a window sized for the fast paths and the slow path's queue, which a quarter of its packets cross, "
        "grows: the latest sample does better. MSwift's own setting (its topology, traffic and filter) is not published "
        "in a form this fabric reproduces; the check asks for the direction the paper reports. Per-path state is the "
        "other answer: with four subflows a connection's packets keep to four ECMP paths, each subflow's Swift sees only "
        "its own path's delay, and the slow path's samples size only its own window "
        f"(p99 slowdown {split.slowdown_p99:.1f} against {ecmp.slowdown_p99:.1f} on one path and "
        f"{latest.slowdown_p99:.1f} sprayed). The subflows share one sequence space, but each keeps RACK's latest "
        "delivery of its own, so a packet overtaken by another path's is not taken for lost "
        f"({split.retransmits:.0f} retransmissions and {split.drops:.0f} drops; sprayed {latest.retransmits:.0f} "
        f"retransmissions)."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"feedback": d}, discussion=discussion)


register(
    Experiment(
        name="multipath-feedback",
        group="multipath",
        title="Swift with one slow path: latest against median feedback, and per-path state",
        paper=(
            "MSwift (2025): Swift reacting to its latest delay sample mishandles feedback that mixes paths; a median over "
            "recent samples fixes it. htsim's multipath Swift keeps a window and RTT per subflow, each on its own path."
        ),
        points=points,
        analyse=analyse,
        reference="paper",
    )
)
