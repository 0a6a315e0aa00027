"""TIMELY Fig. 15 (§6.1): throughput and RTT against T_low for 16, 32 and 64 KB segments.

The outstanding-bytes cap is four segments (the testbed's 64 KB at 16 KB segments), so a
connection is never window-limited to a single large segment; the paper does not give its cap.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import mark_paper, styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import grid_points, over_seeds, ref_row, summaries
from .testbed import plan

SEGMENTS_KB = [16, 32, 64]
T_LOW_US = [0, 25, 50, 100, 200, 300, 400]
#: Published (segment KB, T_low µs) -> throughput Gbps (§6.1 text).
PAPER = {(16, 50): 19.4, (16, 0): 18.9}
#: The (segment KB, T_low µs) cells in the report's table (every cell is in the data CSV).
TABLE = [(16, 0), (16, 50), (16, 100), (32, 50), (32, 100), (64, 50), (64, 200), (64, 300)]


def points(quick: bool) -> list[Point]:
    cells = [
        (
            {"segment_kb": seg, "t_low_us": t},
            {"nic.segment": f"{seg}KB", "nic.max_outstanding": f"{4 * seg}KB", "cc.t_low": f"{t}us"},
        )
        for seg in SEGMENTS_KB
        for t in T_LOW_US
    ]
    return grid_points("timely-fig15", cells, plan(quick))


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (a, b) = subplots(2, width=6.5, height=2.5)
    for seg in SEGMENTS_KB:
        x = d[d.segment_kb == seg]
        a.errorbar(x.t_low_us, x.throughput_gbps, x.throughput_gbps_sd, marker="o", capsize=2, label=f"{seg} KB")
        b.errorbar(x.t_low_us, x.rtt_avg_us, x.rtt_avg_us_sd, marker="o", capsize=2, label=f"{seg} KB")
    mark_paper(a, [t for _, t in PAPER], PAPER.values(), label="paper, 16 KB")
    a.set(xlabel="T_low (µs)", ylabel="Total throughput (Gbps)", ylim=(0, 21))
    b.set(xlabel="T_low (µs)", ylabel="Average RTT (µs)")
    a.legend(title="segment", loc="lower right")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = over_seeds(summaries(runs), ["segment_kb", "t_low_us"])
    v = d.set_index(["segment_kb", "t_low_us"])
    thr, rtt = v.throughput_gbps, v.rtt_avg_us
    small64 = thr[64][[0, 25, 50]].mean()
    # Per segment size, the smallest T_low before throughput collapses (§6.1: "lower thresholds
    # eventually have an adverse effect on throughput").
    kept = {seg: min(t for t in T_LOW_US if thr[seg][t] >= 0.95 * thr[seg].max()) for seg in SEGMENTS_KB}
    checks = [
        Check(
            "16 KB: T_low = 50 µs is within 0.3 Gbps of the best throughput",
            thr[16][50] >= thr[16].max() - 0.3,
            f"{thr[16][50]:.2f} Gbps at 50 µs, best {thr[16].max():.2f} at {thr[16].idxmax()} µs",
        ),
        Check(
            "16 KB: no T_low costs throughput",
            thr[16][0] < thr[16][50],
            f"{thr[16][0]:.2f} (T_low 0) vs {thr[16][50]:.2f} Gbps (50 µs)",
        ),
        Check(
            "64 KB: a small T_low (≤ 50 µs) loses throughput against T_low = 300 µs",
            small64 < thr[64][300] - 0.5,
            f"mean {small64:.2f} Gbps at T_low ≤ 50 µs vs {thr[64][300]:.2f} at 300 µs",
        ),
        Check(
            "a lower T_low gives a lower RTT until throughput collapses (the smallest T_low within 5 % of the "
            "best throughput vs the largest, every segment size)",
            all(rtt[seg][kept[seg]] < rtt[seg][T_LOW_US[-1]] for seg in SEGMENTS_KB),
            "; ".join(
                f"{seg} KB {rtt[seg][kept[seg]]:.0f} (T_low {kept[seg]}) vs {rtt[seg][T_LOW_US[-1]]:.0f} µs"
                for seg in SEGMENTS_KB
            ),
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"{seg} KB, T_low {t} µs: throughput", "Gbps", thr[seg][t], PAPER.get((seg, t))) for seg, t in TABLE]
    )
    pauses = v.pauses
    discussion = (
        f"With 16 KB segments T_low = 50 µs gives {thr[16][50]:.1f} Gbps (paper 19.4) and no T_low "
        f"{thr[16][0]:.1f} Gbps (paper 18.9): without a threshold every RTT rise from colliding bursts "
        f"is read as congestion. The best is at T_low = 100 µs ({thr[16][100]:.1f} Gbps): at a 10 Gbps port of "
        "the bonded server 50 µs of queue is 62 KB, under four 16 KB segments, so colliding bursts cross "
        "T_low more often than on one 20 Gbps link (Fig. 9's 50 µs target loses throughput the same "
        f"way). With 64 KB segments a small T_low loses throughput ({small64:.1f} Gbps "
        f"on average at T_low ≤ 50 µs) and T_low ≥ 200 µs recovers it ({thr[64][200]:.1f}–{thr[64][400]:.1f} "
        "Gbps): the paper's transition, between 200 and 300 µs there, is between 100 and 200 µs here. The "
        "loss is much smaller than the paper's (its unpaced 64 KB runs in Fig. 16 get 10–11 Gbps): the "
        "model has no host timing noise on top of the burst collisions, and Fig. 12 shows how much "
        "noise costs. Raising T_low raises the RTT, as in the paper. Unlike the paper's TIMELY runs, "
        "these see PFC pauses whenever the RTT is let grow (e.g. "
        f"{pauses[64][300]:.0f} per run at 64 KB, T_low 300 µs; {pauses[16][300]:.0f} at 16 KB, 300 µs, where "
        f"throughput dips to {thr[16][300]:.1f} Gbps): the model's switch sends PAUSE when one ingress port "
        "holds more than 100 KB, which 64 KB bursts from four connections of one client exceed. The "
        "outstanding cap (four segments) is ours; the paper does not state its cap."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"summary": d}, discussion=discussion)


register(
    Experiment(
        name="timely-fig15",
        group="timely",
        title="Fig. 15: T_low against segment size",
        paper=(
            "16 KB segments: T_low = 50 µs gives the highest throughput (19.4 Gbps), 18.9 Gbps with no "
            "T_low. 32 KB: the tipping point is T_low = 100 µs. 64 KB: the transition is between 200 "
            "and 300 µs. A lower T_low gives a lower RTT until throughput collapses."
        ),
        points=points,
        analyse=analyse,
    )
)
