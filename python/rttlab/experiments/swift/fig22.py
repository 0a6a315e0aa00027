"""Swift Fig. 22 (§5.5): two flows to one receiver, one from the same rack (1 switch) and one
from a remote rack (3 switches), with and without topology-based target scaling."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import Plan, ref_row
from .t1 import jain
from .t1 import points as t1_points

FULL = Plan(warmup_ms=10, measured_ms=40, seeds=(1, 2))
QUICK = Plan(warmup_ms=5, measured_ms=10, seeds=(1,))
FLOWS = [{"src": [1], "dst": 0}, {"src": [16], "dst": 0}]
NAMES = {1: "intra-rack", 16: "remote rack"}


def points(quick: bool) -> list[Point]:
    cells = [
        ({"tbs": tbs}, {"flows": FLOWS, "cc": {"algorithm": "swift", "topology_scaling": tbs}}) for tbs in (False, True)
    ]
    return t1_points("swift-fig22", cells, QUICK if quick else FULL)


def rows(runs: list[Run]) -> pd.DataFrame:
    out = []
    for r in runs:
        f = r.result.flows
        for src, g in zip(f.src, f.goodput_gbps):
            out.append({"tbs": r.labels["tbs"], "seed": r.labels["seed"], "flow": NAMES[src], "goodput_gbps": g})
    return pd.DataFrame(out).groupby(["tbs", "flow"], sort=False).goodput_gbps.mean().reset_index()


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (a,) = subplots(1, width=3.6, height=2.4)
    for i, flow in enumerate(NAMES.values()):
        x = d[d.flow == flow]
        a.bar([j + (i - 0.5) * 0.35 for j in range(2)], x.goodput_gbps, 0.35, label=flow)
    a.set_xticks(range(2), ["without TBS", "with TBS"])
    a.set(ylabel="Throughput (Gbps)")
    a.legend(loc="upper right")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = rows(runs)
    v = d.set_index(["tbs", "flow"]).goodput_gbps
    j = {tbs: jain([v[(tbs, f)] for f in NAMES.values()]) for tbs in (False, True)}
    share = {tbs: v[(tbs, "remote rack")] / (v[(tbs, "remote rack")] + v[(tbs, "intra-rack")]) for tbs in (False, True)}
    checks = [
        Check(
            "without topology scaling the remote-rack flow gets less (under 40 % of the two)",
            share[False] < 0.4,
            f"{share[False]:.0%}",
        ),
        Check("with it the two are fair (Jain ≥ 0.95)", j[True] >= 0.95, f"{j[True]:.3f} (without: {j[False]:.3f})"),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{'with' if t else 'without'} TBS: {f}", "Gbps", v[(t, f)], None)
            for t in (False, True)
            for f in NAMES.values()
        ]
        + [ref_row(f"{'with' if t else 'without'} TBS: Jain's index", "", j[t], None) for t in (False, True)]
    )
    discussion = (
        f"Without topology scaling both flows are held to the same target although the remote flow's unloaded RTT is "
        f"longer by two switch hops each way, so it gets {share[False]:.0%} of the link; with ℏ = 1 µs per switch "
        f"(about the 1.2 µs a hop adds here: 2 × 0.5 µs of propagation plus serialization) it gets {share[True]:.0%}."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"throughput": d}, discussion=discussion)


register(
    Experiment(
        name="swift-fig22",
        group="swift",
        title="Fig. 22: RTT fairness with and without topology-based scaling",
        paper="Two flows to one machine, one from the same rack and one from a remote rack: unfair without topology-based scaling, fair with it.",
        points=points,
        analyse=analyse,
    )
)
