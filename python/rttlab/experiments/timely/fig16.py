"""TIMELY Fig. 16 (§6.1): 64 KB segments with static NIC pacing of the packets inside each
segment (`nic.pacing_rate`), T_low 0 and 50 µs. RTT samples subtract the pacer's serialization
(segment / pacing rate), as the paper does. Outstanding cap: four segments (see Fig. 15)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import mark_paper, styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import grid_points, over_seeds, ref_row, summaries
from .testbed import plan

#: NIC pacing rates in Gbps; 10 = none (line rate bursts).
PACING_GBPS = [0.5, 0.7, 1.0, 2.0, 5.0, 10.0]
T_LOW_US = [0, 50]
#: Published (T_low µs, pacing Gbps) -> throughput Gbps (§6.1 text; 10 = no pacing).
PAPER = {(50, 0.7): 18.9, (0, 0.7): 18.4, (50, 10.0): 11.2, (0, 10.0): 10.2}


def points(quick: bool) -> list[Point]:
    cells = []
    for t in T_LOW_US:
        for g in PACING_GBPS:
            o = {"nic.segment": "64KB", "nic.max_outstanding": "256KB", "cc.t_low": f"{t}us"}
            if g < 10:
                o["nic.pacing_rate"] = f"{int(g * 1000)}Mbps"
            cells.append(({"t_low_us": t, "pacing_gbps": g}, o))
    return grid_points("timely-fig16", cells, plan(quick))


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (a, b) = subplots(2, width=6.5, height=2.5)
    for i, t in enumerate(T_LOW_US):
        x = d[d.t_low_us == t]
        a.errorbar(x.pacing_gbps, x.throughput_gbps, x.throughput_gbps_sd, marker="o", capsize=2, label=f"T_low {t} µs")
        b.errorbar(x.pacing_gbps, x.rtt_avg_us, x.rtt_avg_us_sd, marker="o", capsize=2, label=f"T_low {t} µs")
        p = {g: v for (tl, g), v in PAPER.items() if tl == t}
        mark_paper(a, p.keys(), p.values(), label="paper" if i == 0 else "_")
    for ax in (a, b):
        ax.set_xscale("log")
        ax.set_xticks(PACING_GBPS, ["0.5", "0.7", "1", "2", "5", "none"])
        ax.minorticks_off()
        ax.set_xlabel("NIC pacing rate (Gbps)")
    a.set(ylabel="Total throughput (Gbps)", ylim=(0, 21))
    b.set(ylabel="Average RTT, pacing subtracted (µs)")
    a.legend(loc="lower right")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = over_seeds(summaries(runs), ["t_low_us", "pacing_gbps"])
    thr = d.set_index(["t_low_us", "pacing_gbps"]).throughput_gbps
    checks = [
        Check(
            f"NIC pacing at 700 Mbps recovers throughput lost to 64 KB bursts (T_low {t} µs)",
            thr[t][0.7] > thr[t][10.0] + 0.5,
            f"{thr[t][10.0]:.2f} Gbps unpaced → {thr[t][0.7]:.2f} Gbps paced",
        )
        for t in T_LOW_US
    ]
    checks.append(
        Check(
            "pacing at the fair share (500 Mbps) throttles",
            all(thr[t][0.5] < thr[t][0.7] for t in T_LOW_US),
            "; ".join(f"T_low {t}: {thr[t][0.5]:.2f} vs {thr[t][0.7]:.2f} Gbps" for t in T_LOW_US),
        )
    )
    table = pd.DataFrame(
        [
            ref_row(
                f"T_low {t} µs, pacing {'none' if g == 10 else f'{g:g} Gbps'}: throughput",
                "Gbps",
                thr[t][g],
                PAPER.get((t, g)),
            )
            for t in T_LOW_US
            for g in PACING_GBPS
        ]
    )
    discussion = (
        f"Unpaced 64 KB segments give {thr[50][10.0]:.1f} / {thr[0][10.0]:.1f} Gbps (T_low 50 / 0 µs; paper "
        f"11.2 / 10.2) and 700 Mbps pacing {thr[50][0.7]:.1f} / {thr[0][0.7]:.1f} Gbps (paper 18.9 / 18.4). "
        f"With T_low = 50 µs pacing recovers the lost throughput, and 0.7–1 Gbps is the best rate, as in "
        f"the paper. With T_low = 0 the unpaced runs lose little here ({thr[0][10.0]:.1f} Gbps), so there is "
        "little to recover: as in Fig. 15, 64 KB bursts cost far less throughput in the model than on "
        "the testbed. Pacing at the 500 Mbps fair share throttles every connection to at most its "
        "share, as the paper notes. RTTs subtract the pacer's serialization, as the paper's do."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"summary": d}, discussion=discussion)


register(
    Experiment(
        name="timely-fig16",
        group="timely",
        title="Fig. 16: NIC pacing of 64 KB segments",
        paper=(
            "64 KB segments paced by the NIC at a static rate: best at 700 Mbps, 18.9 Gbps (T_low "
            "50 µs) and 18.4 Gbps (T_low 0), against 11.2 and 10.2 Gbps without pacing; a slight dip "
            "as pacing approaches the fair share."
        ),
        points=points,
        analyse=analyse,
    )
)
