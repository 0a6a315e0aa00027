"""`failures-outage`: a core link goes down under WebSearch load on a fat-tree, and the fabric's
routes keep it for `routing.failover_delay` (the black hole while its ends detect it and routing
withdraws it). Which connections stall, and for how long, under DCTCP with per-flow ECMP, with
Protective ReRoute (PRR, Wetherall et al., SIGCOMM'23: hosts repath on a retransmission timeout;
fleet-wide, outage time fell 63–84 %), and with spraying and REPS (Bonato et al., 2024: a
sprayed connection stops using a dead path within 100 µs). The failover delay decides how long
the black hole lasts and the paper's fleet does not publish one: two are run."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from ..multipath.common import DCTCP, ROUTING
from .common import FULL, core_link, scenario

#: The quick form runs longer than the other failure experiments' (its fabric is small): the
#: black hole and the timeouts after it must fit.
QUICK = (4, "25Gbps", 0.5, 7.5)
#: The black hole's length: a fast local repair, and a routing protocol's convergence.
FAILOVER = {False: ["1ms", "5ms"], True: ["0.5ms", "3ms"]}
#: (label, routing mode, PRR), and the failover delays each runs at (the longest alone for the
#: sprayed ones, whose repair does not wait for it).
CASES = [("ECMP", "ECMP", False), ("ECMP, PRR", "ECMP", True), ("spraying", "spraying", False), ("REPS", "REPS", False)]
#: A stall is an outage no shorter than the retransmission timeout's floor (the window
#: transport's `min_rto`, 1 ms): only a timeout ends it.
STALL_US = 1000.0


def fault_at(quick: bool) -> str:
    return f"{(QUICK if quick else FULL)[2] + 1.0:g}ms"


def runs_of(quick: bool) -> list[tuple[str, str]]:
    delays = FAILOVER[quick]
    return [(case, d) for case, mode, _ in CASES for d in (delays if mode == "ECMP" else delays[-1:])]


def points(quick: bool) -> list[Point]:
    k = (QUICK if quick else FULL)[0]
    out = []
    for case, delay in runs_of(quick):
        _, mode, prr = next(c for c in CASES if c[0] == case)
        settings: dict[str, Any] = {**DCTCP, "routing": {**ROUTING[mode], "failover_delay": delay}}
        settings["faults"] = [{"at": fault_at(quick), "link": core_link(k), "kind": "down"}]
        s = scenario(f"failures-outage {case} {delay}", settings, quick, (FULL, QUICK))
        s["transport"]["prr"] = prr
        out.append(Point({"case": case, "failover_delay": delay}, s))
    return out


def measured(runs: list[Run]) -> pd.DataFrame:
    rows = []
    for r in runs:
        f = r.result.tables["flow_records"]
        stalled = f[f.outage_us >= STALL_US]
        computed = {
            "flows": len(f),
            "stalled": len(stalled),
            "stall_ms": float(stalled.outage_us.sum()) / 1e3,
            "outage_max_ms": float(f.outage_us.max()) / 1e3 if len(f) else np.nan,
            "stalled_unfinished": int((stalled.finished == 0).sum()),
        }
        rows.append(summary_row(r, ["lost_down", "repaths", "timeouts", "slowdown_p99"], **computed))
    return pd.DataFrame(rows)


@styled
def plot(d: pd.DataFrame) -> Any:
    """Per case: the time connections spent stalled, and the longest outage."""
    fig, ax = subplots(2, 1, width=7.0, height=2.4)
    names = [f"{c}\n{f}" for c, f in zip(d.case, d.failover_delay)]
    colors = {"ECMP": "C0", "ECMP, PRR": "C1", "spraying": "C2", "REPS": "C3"}
    x = np.arange(len(d))
    for a, (col, label) in zip(
        ax, [("stall_ms", "time stalled (ms, summed)"), ("outage_max_ms", "longest outage (ms)")]
    ):
        a.bar(x, d[col], color=[colors[c] for c in d.case])
        a.set_xticks(x, names, fontsize=6)
        a.set(ylabel=label)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs)
    v = d.set_index(["case", "failover_delay"])
    long = FAILOVER[quick][-1]
    e, p = v.loc[("ECMP", long)], v.loc[("ECMP, PRR", long)]
    cut = 1 - p.stall_ms / e.stall_ms if e.stall_ms > 0 else np.nan
    sprayed = [v.loc[(c, long)] for c in ("spraying", "REPS")]
    checks = [
        Check(
            "PRR cuts the time connections spend stalled by more than half (PRR: outage time −63 to −84 %)",
            bool(cut > 0.5),
            f"failover after {long}: {e.stall_ms:.1f} ms stalled over {e.stalled:.0f} connections under ECMP, "
            f"{p.stall_ms:.1f} ms over {p.stalled:.0f} with PRR ({cut:.0%} less)",
        ),
        Check(
            "With PRR a connection's outage ends at a timeout, not when the routes fail over",
            bool(p.outage_max_ms < float(long.removesuffix("ms"))),
            f"longest outage {e.outage_max_ms:.2f} ms under ECMP, {p.outage_max_ms:.2f} ms with PRR; routes fail over after {long}",
        ),
        Check(
            "A sprayed connection does not wait for the routes: its other packets keep arriving, and a lost tail waits "
            "for a timeout only when its probe is lost too (REPS: it leaves a dead path within 100 µs)",
            all(x.outage_max_ms < float(long.removesuffix("ms")) for x in sprayed),
            ", ".join(
                f"{c}: {x.stalled:.0f} stalled, longest outage {x.outage_max_ms:.2f} ms"
                for c, x in zip(("spraying", "REPS"), sprayed)
            )
            + f"; routes fail over after {long}",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{c}, failover {f}: {q}", u, v.loc[(c, f)][col], None)
            for c, f in runs_of(quick)
            for q, u, col in [
                ("connections stalled", "", "stalled"),
                ("time stalled", "ms", "stall_ms"),
                ("longest outage", "ms", "outage_max_ms"),
                ("packets lost to the link", "", "lost_down"),
            ]
        ]
    )
    k, rate, warm, meas = QUICK if quick else FULL
    discussion = (
        f"A k = {k} fat-tree at {rate} under DCTCP (RACK, an ACK per packet), WebSearch flow sizes at 50 % load to uniformly "
        f"random hosts, {warm + meas:g} ms with {warm:g} ms warm-up; the link {core_link(k)} (an aggregation switch's first "
        f"core uplink, both directions) goes down at {fault_at(quick)} for the rest of the run. Until routes fail over, "
        "every switch keeps hashing into it: connections whose path crosses it lose everything sent and retransmit on "
        "timeouts, doubling each; the failover delay sets how long, and both values are run. A connection's outage is its "
        f"longest time without new data delivered while its transfer was under way; a stall one of at least {STALL_US / 1e3:g} "
        "ms, the retransmission timeout's floor. PRR draws a new path label on each timeout, and the receiver one for its "
        "ACKs when data it had comes again: its outage is one timeout and the backoff of the draws that hit the dead link "
        "again. Sprayed connections lose the share of their packets that crosses the link, and RACK resends them; a lost "
        "tail (the last packets of a flow, with nothing after them to show the gap) is probed two RTTs on (RACK's "
        "tail-loss probe) and waits for a timeout when the probe is lost too. Under REPS the ACKs ride the entropy "
        "they echo. The paper's 63–84 % is "
        "fleet-wide over months of failures, not a setting to rebuild: the check asks for more than half."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"outage": d}, discussion=discussion)


register(
    Experiment(
        name="failures-outage",
        group="failures",
        title="A core link down under WebSearch: connections stalled and for how long, ECMP, PRR, spraying and REPS",
        paper=(
            "PRR (SIGCOMM 2023): hosts that repath on a retransmission timeout cut outage time 63–84 % across Google's fleet; "
            "REPS (2024): a sprayed connection stops using a failed path in under 100 µs."
        ),
        points=points,
        analyse=analyse,
    )
)
