"""`multipath-permutation`: permutation traffic on a full-bisection fat-tree at 100 Gbps, every
host sending to one other and receiving from one, under each routing mode: per-flow ECMP's hash
collisions leave links idle beside doubly loaded ones (Al-Fares et al., SIGCOMM'08; the
spraying papers' baseline); flowlets, packet spraying, REPS and adaptive routing approach the
bisection. And under spraying, an RDMA transport's go-back-N beside selective repeat (IRN,
SIGCOMM'18: go-back-N resends everything after each gap that reordering opens)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from .common import DCQCN, DCTCP, ROUTING, base

#: (label, scheme, routing, NIC recovery) of every run.
CASES: list[tuple[str, dict[str, Any], str, str | None]] = [
    *((f"DCTCP, {r}", DCTCP, r, None) for r in ROUTING),
    ("DCQCN, ECMP, go-back-N", DCQCN, "ECMP", "go_back_n"),
    ("DCQCN, spraying, go-back-N", DCQCN, "spraying", "go_back_n"),
    ("DCQCN, spraying, selective repeat", DCQCN, "spraying", "selective_repeat"),
]
#: (k, warm-up ms, measured ms): k = 8 is the issue's fabric (128 hosts); the quick form a
#: k = 4 one (16 hosts) for a fraction of a millisecond.
FULL, QUICK = (8, 1.0, 4.0), (4, 0.2, 0.5)
RATE_GBPS = 100


def permutation(hosts: int, seed: int) -> list[int]:
    """A random derangement of the hosts: host i sends to the i-th entry, nobody to itself."""
    rng = np.random.default_rng(seed)
    while True:
        p = rng.permutation(hosts)
        if not np.any(p == np.arange(hosts)):
            return [int(x) for x in p]


def scenario(label: str, quick: bool) -> dict[str, Any]:
    _, scheme, routing, recovery = next(c for c in CASES if c[0] == label)
    k, warm, meas = QUICK if quick else FULL
    hosts = k**3 // 4
    s = base(f"multipath-permutation {label}", k, f"{RATE_GBPS}Gbps", warm, meas)
    s["flows"] = [{"src": f"0-{hosts - 1}", "dst": permutation(hosts, 1)}]
    s["routing"] = dict(ROUTING[routing])
    for key, value in scheme.items():
        set_key(s, key, copy.deepcopy(value))
    if recovery:
        set_key(s, "nic.recovery", recovery)
    return s


def points(quick: bool) -> list[Point]:
    return [Point({"case": c[0]}, scenario(c[0], quick)) for c in CASES]


def measured(runs: list[Run], quick: bool) -> pd.DataFrame:
    k = (QUICK if quick else FULL)[0]
    bisection = k**3 // 4 * RATE_GBPS
    keys = [
        "throughput_gbps",
        "reordered",
        "retransmits",
        "spurious_retransmits",
        "drops",
        "pauses",
        "ecn_marks",
        "rtt_avg_us",
    ]
    return pd.DataFrame(
        [summary_row(r, keys, of_bisection=r.result.summary["throughput_gbps"] / bisection) for r in runs]
    )


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, 1, width=6.0, height=2.6)
    ax.barh(d.case, d.of_bisection, color="C0")
    ax.invert_yaxis()
    ax.set(xlabel="aggregate throughput, fraction of the bisection", xlim=(0, 1.05))
    ax.axvline(1.0, color="grey", linewidth=0.6, linestyle=":")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs, quick)
    v = d.set_index("case").of_bisection
    dctcp = {r: v[f"DCTCP, {r}"] for r in ROUTING}
    best = max(dctcp["spraying"], dctcp["REPS"], dctcp["adaptive"])
    gbn, sr, ecmp = v["DCQCN, spraying, go-back-N"], v["DCQCN, spraying, selective repeat"], v["DCQCN, ECMP, go-back-N"]
    checks = [
        Check(
            "hash collisions hold per-flow ECMP well below the bisection (under 85 %)",
            bool(dctcp["ECMP"] < 0.85),
            f"DCTCP over ECMP carries {dctcp['ECMP']:.0%} of the bisection",
        ),
        Check(
            "packet spraying, REPS or adaptive routing comes close to the bisection (over 90 %)",
            bool(best > 0.9),
            ", ".join(f"{r} {dctcp[r]:.0%}" for r in ["spraying", "REPS", "adaptive"]),
        ),
        Check(
            "every per-packet mode carries more than ECMP",
            bool(min(dctcp["spraying"], dctcp["REPS"], dctcp["adaptive"]) > dctcp["ECMP"]),
            ", ".join(f"{r} {x:.0%}" for r, x in dctcp.items()),
        ),
        Check(
            "go-back-N collapses under spraying (below half of its ECMP throughput); selective repeat does not",
            bool(gbn < 0.5 * ecmp and sr > 0.8 * ecmp),
            f"DCQCN: ECMP {ecmp:.0%}, spraying with go-back-N {gbn:.0%}, with selective repeat {sr:.0%} of the bisection",
        ),
    ]
    table = pd.DataFrame([ref_row(f"{c}: throughput, of the bisection", "", x, None) for c, x in v.items()])
    k, warm, meas = QUICK if quick else FULL

    def rtt(routing: str) -> float:
        return float(d.set_index("case").rtt_avg_us[f"DCTCP, {routing}"])

    discussion = (
        f"A k = {k} fat-tree ({k**3 // 4} hosts) at {RATE_GBPS} Gbps on every link, each host sending one long flow to a "
        f"random other host (a derangement, seed 1) for {warm + meas:g} ms, the first {warm:g} ms warm-up. Flowlets use "
        "routing.flowlet_gap = 100 µs: with long flows at 100 Gbps their gaps are rare, so they act much as ECMP; the "
        "window transport detects loss by time (RACK) in every DCTCP run, since three duplicate ACKs would take spraying's "
        "reordering for loss, and undoes a recovery its timestamps prove spurious, as Linux does. Where the per-packet "
        "modes stop short of the bisection, DCTCP's windows are the limit: spraying's queues are shallow but many, the "
        f"mean RTT rises from {rtt('ECMP'):.1f} µs under ECMP to {rtt('spraying'):.1f} µs under spraying, and each "
        "spurious retransmission (reordering beyond RACK's window, "
        f"{d.set_index('case').spurious_retransmits['DCTCP, spraying']:.0f} of them under spraying) cuts a window that "
        "additive increase rebuilds over many round trips. Selective repeat resends a packet once three beyond it are "
        "reported: reordering deeper than that still costs it retransmissions, which the data file counts."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"permutation": d}, discussion=discussion)


register(
    Experiment(
        name="multipath-permutation",
        group="multipath",
        title="Permutation traffic on a full-bisection fat-tree: ECMP, flowlets, spraying, REPS and adaptive routing",
        paper=(
            "Per-flow ECMP's hash collisions hold permutation traffic well below a fat-tree's bisection (Al-Fares et al., "
            "SIGCOMM 2008; CONGA, DRILL, REPS); per-packet spraying comes close to it; go-back-N collapses under "
            "spraying's reordering and selective repeat does not (IRN, SIGCOMM 2018)."
        ),
        points=points,
        analyse=analyse,
    )
)
