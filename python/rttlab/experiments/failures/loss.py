"""`failures-loss`: every link between switches loses packets silently (a bit-error rate: the
receiver's frame check fails) with a probability from 1e-6 to 1e-3, under WebSearch load on a
fat-tree: DCTCP and Swift on the window transport, and DCQCN on the message transport with
RoCE's go-back-N against selective repeat (IRN, Mittal et al., SIGCOMM'18: go-back-N resends
everything after a loss, so its goodput falls steeply with the loss rate; selective repeat
resends the lost packet). Goodput of the large flows and the FCT slowdown."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from ..multipath.common import DCQCN, DCTCP, SWIFT, small_flow_p99
from .common import scenario

SCHEMES: dict[str, dict[str, Any]] = {
    "DCTCP": DCTCP,
    "Swift": SWIFT,
    "DCQCN, go-back-N": {**DCQCN, "nic.recovery": "go_back_n"},
    "DCQCN, selective repeat": {**DCQCN, "nic.recovery": "selective_repeat"},
}
PROBABILITY = {False: [0.0, 1e-6, 1e-5, 1e-4, 1e-3], True: [0.0, 1e-3]}
#: (k, link rate, warm-up ms, measured ms): shorter than the other failure experiments, as it
#: runs twenty.
SIZE = ((8, "100Gbps", 1.0, 4.0), (4, "25Gbps", 0.5, 3.5))
LARGE_BYTES = 1_000_000
SMALL_BYTES = 100_000


def points(quick: bool) -> list[Point]:
    out = []
    for scheme, settings in SCHEMES.items():
        for p in PROBABILITY[quick]:
            s = {**settings}
            if p > 0:
                s["faults"] = [{"at": "0s", "link": "s*-s*", "kind": "drop", "probability": p}]
            out.append(Point({"scheme": scheme, "loss": p}, scenario(f"failures-loss {scheme} {p:g}", s, quick, SIZE)))
    return out


def measured(runs: list[Run]) -> pd.DataFrame:
    rows = []
    for r in runs:
        t = r.result.tables
        f = t["flow_records"]
        # Flows still under way count with what they delivered over their age, so that a
        # scheme whose slowest flows never finish is not credited with the fast ones alone.
        large = f[f.size_bytes >= LARGE_BYTES]
        computed = {
            "large_goodput_gbps": float((large.delivered_bytes * 8 / large.age_us / 1e3).mean())
            if len(large)
            else np.nan,
            "small_p99_slowdown": small_flow_p99(t["fct"], SMALL_BYTES),
            "unfinished": int((f.finished == 0).sum()),
        }
        rows.append(summary_row(r, ["slowdown_p99", "lost_silent", "retransmits", "timeouts"], **computed))
    return pd.DataFrame(rows)


@styled
def plot(d: pd.DataFrame) -> Any:
    """Large flows' goodput and the p99 slowdown against the loss rate, per scheme (loss 0
    drawn at 1e-7)."""
    fig, ax = subplots(2, 1, width=7.0, height=2.6)
    for scheme, g in d.groupby("scheme", sort=False):
        x = g.loss.replace(0.0, 1e-7)
        ax[0].plot(x, g.large_goodput_gbps, marker="o", label=scheme)
        ax[1].plot(x, g.slowdown_p99, marker="o", label=scheme)
    for a, label in zip(ax, ["goodput of flows ≥ 1 MB (Gbps)", "p99 slowdown"]):
        a.set(xscale="log", xlabel="loss probability per link (0 at 1e-7)", ylabel=label)
    ax[1].set_yscale("log")
    ax[0].legend(fontsize=6, frameon=False)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs)
    v = d.set_index(["scheme", "loss"])
    top = PROBABILITY[quick][-1]
    kept = {s: v.loc[(s, top)].large_goodput_gbps / v.loc[(s, 0.0)].large_goodput_gbps for s in SCHEMES}
    gbn, sr = kept["DCQCN, go-back-N"], kept["DCQCN, selective repeat"]
    checks = [
        Check(
            f"At {top:g} loss selective repeat keeps more of DCQCN's goodput than go-back-N (IRN)",
            bool(sr > gbn),
            f"large flows' goodput kept: go-back-N {gbn:.0%}, selective repeat {sr:.0%}",
        ),
        Check(
            f"The window transport rides through {top:g} loss: DCTCP and Swift keep most of their goodput",
            bool(kept["DCTCP"] > 0.5 and kept["Swift"] > 0.5),
            f"DCTCP {kept['DCTCP']:.0%}, Swift {kept['Swift']:.0%}",
        ),
    ]
    if not quick:
        low = {s: v.loc[(s, 1e-6)].large_goodput_gbps / v.loc[(s, 0.0)].large_goodput_gbps for s in SCHEMES}
        checks.append(
            Check(
                "A loss rate of 1e-6 costs no scheme more than 5 % of its large flows' goodput",
                all(x > 0.95 for x in low.values()),
                ", ".join(f"{s} {x:.0%}" for s, x in low.items()),
            )
        )
    table = pd.DataFrame(
        [
            ref_row(f"{s}, loss {p:g}: {q}", u, v.loc[(s, p)][col], None)
            for s in SCHEMES
            for p in PROBABILITY[quick]
            for q, u, col in [
                ("goodput of flows ≥ 1 MB", "Gbps", "large_goodput_gbps"),
                ("p99 slowdown", "", "slowdown_p99"),
            ]
        ]
    )
    k, rate, warm, meas = SIZE[quick]
    discussion = (
        f"A k = {k} fat-tree at {rate}, WebSearch flow sizes at 50 % load, {warm + meas:g} ms with {warm:g} ms warm-up; "
        "every link between switches, both directions, loses each packet with the probability shown, from its own random "
        "stream. A flow's goodput is its size over its FCT, or for one still under way at the end what it delivered over "
        "its age; the large flows' mean is shown. The slowdowns count flows under way at their age (a lower bound). DCQCN runs over PFC with no "
        "window (the HPCC simulator's setting): go-back-N resends everything from the lost packet on, selective repeat "
        "the packet alone once three beyond it are reported. Where a loss falls on the last packets of a message only "
        "the local ACK timeout recovers it (`nic.retransmit_timeout`, which decides the tail: `docs/scenarios.md`)."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"loss": d}, discussion=discussion)


register(
    Experiment(
        name="failures-loss",
        group="failures",
        title="Silent losses from 1e-6 to 1e-3 on every switch link: goodput and FCT under DCTCP, Swift and DCQCN's two recoveries",
        paper=(
            "IRN (SIGCOMM 2018): RoCE's go-back-N loses much of its throughput as the loss rate rises, where selective "
            "repeat keeps it; a datacenter link's bit-error rate is 1e-12 when healthy and far higher when its optics fail."
        ),
        points=points,
        analyse=analyse,
    )
)
