"""TIMELY Fig. 14 (§6.1): the RTT distribution of TIMELY, DCTCP and PFC on the incast testbed.
Uses Table 1's runs (the same scenarios, so they run once)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import mark_paper, styled, subplots
from ...published import TIMELY_TABLE1
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from . import table1

SYSTEMS = ["TIMELY", "DCTCP", "PFC"]


def points(quick: bool) -> list[Point]:
    """Table 1's presets' runs of the three systems, first seed (not its sensitivity runs)."""
    return [
        p
        for p in table1.points(quick)
        if p.labels["system"] in SYSTEMS and p.labels["seed"] == 1 and "setting" not in p.labels
    ]


@styled
def plot(cdf: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, width=4.0, height=2.8)
    for s in SYSTEMS:
        x = cdf[cdf.system == s]
        # Start each curve at (smallest sample, 0) so a one-bucket distribution shows as a step.
        line = ax.step([x.rtt_us.iloc[0], *x.rtt_us], [0.0, *x.cdf], where="post", label=s)[0]
        ax.plot(
            [TIMELY_TABLE1[s]["rtt_p99_us"]],
            [0.99],
            linestyle="none",
            marker="D",
            markerfacecolor="none",
            markeredgecolor=line.get_color(),
        )
    mark_paper(ax, [], [], label="paper p99 (◇, system colour)")
    ax.set(xscale="log", xlabel="RTT (µs)", ylabel="CDF", ylim=(0, 1.02))
    ax.legend(loc="lower right")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    cdf = pd.concat([r.result.rtt.assign(system=r.labels["system"]) for r in runs], ignore_index=True)
    s = {r.labels["system"]: r.result.summary for r in runs}
    checks = [
        Check(
            "TIMELY's tail is below PFC's",
            s["TIMELY"]["rtt_p99_us"] < s["PFC"]["rtt_p99_us"],
            f"p99 {s['TIMELY']['rtt_p99_us']:.0f} vs {s['PFC']['rtt_p99_us']:.0f} µs",
        ),
        Check(
            "TIMELY's tail is below DCTCP's (paper: 13× below)",
            s["TIMELY"]["rtt_p99_us"] < s["DCTCP"]["rtt_p99_us"],
            f"p99 {s['TIMELY']['rtt_p99_us']:.0f} vs {s['DCTCP']['rtt_p99_us']:.0f} µs",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{x}: {label}", "µs", s[x][key], TIMELY_TABLE1[x][key])
            for x in SYSTEMS
            for key, label in (("rtt_avg_us", "average RTT"), ("rtt_p99_us", "p99 RTT"))
        ]
    )
    discussion = (
        "TIMELY's distribution sits an order of magnitude left of PFC's, as in the paper. DCTCP's is a "
        f"near-vertical line at {s['DCTCP']['rtt_p50_us']:.0f} µs: every one of its 40 windows sits at the "
        "2-packet floor and the fabric queue holds at the marking threshold (Table 1 explains why, and "
        "why the paper's 598 µs includes host queuing this model does not have)."
    )
    return Outcome(figure=plot(cdf), table=table, checks=checks, data={"cdf": cdf}, discussion=discussion)


register(
    Experiment(
        name="timely-fig14",
        group="timely",
        title="Fig. 14: RTT distribution, TIMELY vs DCTCP and PFC",
        paper="The CDF of RTT: TIMELY averages 61 µs with a p99 of 116 µs; DCTCP 598 µs and 1490 µs.",
        points=points,
        analyse=analyse,
    )
)
