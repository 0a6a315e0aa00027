"""TIMELY Fig. 22 (§6.2): one 40-to-1 incast added to longest-path uniform random RPC
background at 0.167, 0.3 and 0.5 of Fig. 19's largest offered load: background throughput
normalised to the background alone, and the pingers' p99 RTT.

The incast: 40 hosts outside host 0's pod send to host 0 without pause (backlogged connections)
for the whole run; the background is the RPC workload of Figs. 19–21, under each reading of the
clients' server sets (`clos.READINGS`; the default's bars, every reading's lines).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import PALETTE, styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from .clos import DEFAULT, READINGS, SYSTEMS, clos_plan, rows, scenario, verdicts

#: Background loads as fractions of Fig. 19's largest offered load.
BACKGROUND = (0.167, 0.3, 0.5)
SENDERS = 40
#: Without TIMELY, background throughput falls by 13–54 % with the incast (§6.2).
PAPER_PFC_LOSS = (0.13, 0.54)


def incast(k: int) -> dict[str, Any]:
    """40 senders (fewer on a small fabric) outside host 0's pod, backlogged, to host 0."""
    pod = k**2 // 4
    hosts = k**3 // 4
    senders = list(range(pod, hosts))[:SENDERS]
    return {"flows": [{"src": senders, "dst": 0}]}


def points(quick: bool) -> list[Point]:
    p = clos_plan(quick)
    top = max(p.loads)
    out = []
    for reading in READINGS:
        for s in SYSTEMS:
            for bg in BACKGROUND:
                for with_incast in (False, True):
                    for seed in p.run.seeds if reading == DEFAULT else p.reading_seeds:
                        extra = incast(p.k) if with_incast else {}
                        labels = {
                            "reading": reading,
                            "system": s,
                            "background": bg,
                            "incast": with_incast,
                            "seed": seed,
                        }
                        out.append(
                            Point(labels, scenario("timely-fig22", s, round(bg * top, 4), p, seed, extra, reading))
                        )
    return out


@styled
def plot(readings: pd.DataFrame) -> Any:
    d = readings[readings.reading == DEFAULT]
    fig, (a, b, c) = subplots(3, width=7.0, height=2.6)
    width = 0.35
    for i, s in enumerate(SYSTEMS):
        x = d[d.system == s]
        pos = [j + (i - 0.5) * width for j in range(len(BACKGROUND))]
        a.bar(pos, x.normalised, width, label=s)
        b.bar(pos, x.ping_p99_us, width, label=s)
    for ax in (a, b):
        ax.set_xticks(range(len(BACKGROUND)), [f"{bg:g}" for bg in BACKGROUND])
        ax.set_xlabel("Background load (of Fig. 19's largest)")
    a.axhline(1.0, color="0.6", linestyle=":")
    a.set(ylabel="Background throughput\n(normalised to alone)", ylim=(0, 1.3))
    b.set(ylabel="99th-percentile RTT (µs)", ylim=(0, 1.3 * d.ping_p99_us.max()))
    a.legend(loc="upper center", ncol=2)
    b.legend(loc="upper center", ncol=2)
    a.set_title(f"Reading: {DEFAULT}")
    for i, (reading, x) in enumerate(readings.groupby("reading", sort=False)):
        for s in SYSTEMS:
            v = x[x.system == s]
            c.plot(
                v.background,
                v.normalised,
                marker="o",
                markersize=3,
                color=PALETTE[i],
                linestyle="-" if s == "TIMELY" else "--",
                label=f"{reading}, {s}",
            )
    c.axhline(1.0, color="0.6", linestyle=":")
    c.set(
        xlabel="Background load (of Fig. 19's largest)",
        ylabel="Background throughput\n(normalised to alone)",
        title="Every reading (PFC dashed)",
        ylim=(0, 1.15),
    )
    c.legend(fontsize=5, ncol=2)
    return fig


def summary(runs: list[Run]) -> pd.DataFrame:
    """Per reading, system and background load: background throughput with the incast over
    without (`normalised`), pinger p99 with the incast and alone, pauses."""
    d = (
        rows(runs)
        .drop(columns="seed")
        .groupby(["reading", "system", "background", "incast"], sort=False)
        .mean()
        .reset_index()
    )
    alone = d[~d.incast].set_index(["reading", "system", "background"])
    both = d[d.incast].set_index(["reading", "system", "background"])
    out = both[["ping_p99_us", "pauses"]].copy()
    out["normalised"] = both.accepted / alone.accepted
    out["ping_p99_alone_us"] = alone.ping_p99_us
    return out.reset_index()


def lost(d: pd.DataFrame, system: str) -> list[float]:
    """The fraction of background throughput ``system`` loses to the incast, per background
    load (one reading's rows of `summary`)."""
    v = d.set_index(["system", "background"]).normalised
    return [1 - v[system][bg] for bg in BACKGROUND]


def pfc_loses(d: pd.DataFrame) -> tuple[bool, str]:
    loss = lost(d, "PFC")
    return all(x > 0.05 for x in loss), "(" + ", ".join(f"{x:.0%}" for x in loss) + " lost)"


def timely_keeps(d: pd.DataFrame) -> tuple[bool, str]:
    loss = lost(d, "TIMELY")
    return all(x < 0.05 for x in loss), "(" + ", ".join(f"{-x:+.0%}" for x in loss) + ")"


def lower_rtt(d: pd.DataFrame) -> tuple[bool, str]:
    v = d.set_index(["system", "background"]).ping_p99_us
    return all(v["TIMELY"][bg] < v["PFC"][bg] for bg in BACKGROUND), "(" + ", ".join(
        f"{v['TIMELY'][bg]:.0f} vs {v['PFC'][bg]:.0f} µs" for bg in BACKGROUND
    ) + ")"


def analyse(runs: list[Run], quick: bool) -> Outcome:
    readings = summary(runs)
    out = readings[readings.reading == DEFAULT].drop(columns="reading")
    v = out.set_index(["system", "background"])
    loss = {s: lost(out, s) for s in SYSTEMS}
    trends = [
        ("with the incast, PFC loses background throughput (more than 5 % at every background load)", pfc_loses),
        ("TIMELY does not (within 5 % at every background load)", timely_keeps),
        ("p99 RTT with the incast is lower with TIMELY (every background load)", lower_rtt),
    ]
    checks, held = [], {}
    for claim, test in trends:
        ok, text, under = verdicts(readings, test)
        checks.append(Check(f"{claim} (reading {DEFAULT}; every reading listed)", ok, text))
        held[claim.split(" (")[0]] = under
    table = pd.DataFrame(
        [
            ref_row(f"{s}: background throughput lost at {bg:g}", "%", 100 * (1 - v.normalised[s][bg]), None)
            for s in SYSTEMS
            for bg in BACKGROUND
        ]
        + [
            ref_row(
                "PFC: smallest loss over the background loads", "%", 100 * min(loss["PFC"]), 100 * PAPER_PFC_LOSS[0]
            ),
            ref_row(
                "PFC: largest loss over the background loads", "%", 100 * max(loss["PFC"]), 100 * PAPER_PFC_LOSS[1]
            ),
        ]
    )
    discussion = (
        "Under the readings of each client's server set: "
        + "; ".join(f"{claim} holds under {', '.join(r) if r else 'none'}" for claim, r in held.items())
        + ". Under the default reading, "
        f"PFC loses {', '.join(f'{x:.0%}' for x in loss['PFC'])} of the background throughput at background "
        f"{', '.join(f'{bg:g}' for bg in BACKGROUND)} (paper 13–54 %); TIMELY "
        f"{', '.join(f'{x:+.0%}' for x in [-x for x in loss['TIMELY']])}. The incast's pauses spread from host 0's "
        "edge switch up the fabric and stop background RPCs that share none of its links (head-of-line "
        "blocking); TIMELY slows the 40 incast connections instead, so the pauses stay few "
        f"({v.pauses['TIMELY'][BACKGROUND[-1]]:.0f} vs {v.pauses['PFC'][BACKGROUND[-1]]:.0f} per run at {BACKGROUND[-1]:g})."
    )
    return Outcome(figure=plot(readings), table=table, checks=checks, data={"summary": readings}, discussion=discussion)


register(
    Experiment(
        name="timely-fig22",
        group="timely",
        title="Fig. 22: a 40-to-1 incast on top of background (Clos)",
        paper=(
            "Adding one 40-to-1 incast to uniform random background at 0.167, 0.3 and 0.5 of the maximum load: "
            "without TIMELY background throughput falls by 13 % to 54 % (head-of-line blocking from PFC); with "
            "TIMELY it stays the same, and the 99th-percentile RTT stays low."
        ),
        points=points,
        analyse=analyse,
    )
)
