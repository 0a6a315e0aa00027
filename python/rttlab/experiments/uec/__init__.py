"""Ultra Ethernet's transport against htsim_uec's own validation suite (`rttlab reproduce uec`):
htsim's plans read unchanged (`plans`) — NSCC alone, receiver credits (RCCC) alone, both, and the
load balancers under NSCC and under RCCC — each run on the fabric htsim builds for it, its tail
FCT, FCT spread and retransmissions beside what htsim printed for the same run."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from .plans import DATA, Block, HtsimRun, PlanError, matrix_nodes, read_outputs, read_plan, scenario

#: Node counts the quick form runs (`make test`): the 16-node fabric's runs.
QUICK_NODES = 16
#: A run on one entropy value per connection is ECMP's draw of collisions, which the switches'
#: hash decides (rttlab's is not htsim's): it runs once per seed, which draws the hash.
HASH_SEEDS = range(1, 13)


def single_path(b: Block) -> bool:
    return any(flag == "-paths" and value == "1" for flag, value, _ in b.params)


@dataclass(frozen=True)
class Plan:
    name: str
    file: str
    title: str


PLANS = [
    Plan("uec-sender", "validate_uec_sender", "htsim_uec's sender plan: NSCC alone, trimming, mixed load balancing"),
    Plan(
        "uec-load-balancing",
        "validate_load_balancing_snd",
        "htsim_uec's load-balancing plan: oblivious, bitmap, REPS, mixed",
    ),
    Plan(
        "uec-load-balancing-failed",
        "validate_load_balancing_failed_snd",
        "htsim_uec's load balancers with eight core links at a quarter of their speed",
    ),
    Plan("uec-receiver", "validate_uec_rcv", "htsim_uec's receiver plan: receiver credits (RCCC) alone"),
    Plan("uec-both", "validate_uec_both", "htsim_uec's plan with NSCC and receiver credits together"),
    Plan("uec-load-balancing-rcv", "validate_load_balancing_rcv", "htsim_uec's load balancers under receiver credits"),
    Plan(
        "uec-load-balancing-failed-rcv",
        "validate_load_balancing_failed_rcv",
        "htsim_uec's load balancers under receiver credits with eight core links at a quarter of their speed",
    ),
    Plan(
        "uec-connreuse",
        "validate_uec_connreuse",
        "htsim_uec's connection-reuse plan: ten messages on one connection (`msg` lines, -conn_reuse)",
    ),
]

#: (experiment, tolerance on its tail FCT against htsim's) that the NSCC, RCCC and both plans
#: are held to: the single connection, the pair and the sprayed 16-node permutation within 5 %,
#: the incasts and the permutations on htsim's oversubscribed leaf-spines within 10 %, a single
#: path's median within 15 %.
TAIL_TOLERANCES = [
    ("Single Connection", 0.05),
    ("Bidirectional Connection", 0.05),
    ("Small permutation (16 nodes)", 0.05),
    ("Small 16 node incast", 0.10),
    ("128 node incast", 0.10),
    ("1024 node incast", 0.10),
    ("Small permutation, single path.", 0.15),
    ("Oversubscribed permutation with multipath", 0.10),
    ("4:1 oversubscribed permutation with multipath", 0.10),
    ("8:1 oversubscribed permutation with multipath", 0.10),
]


def blocks(plan: Plan, quick: bool) -> list[tuple[int, Block, HtsimRun | None, str | None]]:
    """The plan's blocks with htsim's output for each and, for one rttlab cannot run, why."""
    bs = read_plan(DATA / "plans" / f"{plan.file}.txt")
    outs = read_outputs(DATA / "validate_outputs" / f"{plan.file}.out")
    out = []
    for i, b in enumerate(bs):
        if quick and matrix_nodes(DATA / b.matrix) > QUICK_NODES:
            continue
        try:
            scenario(f"{plan.file}.txt", b)
            why = None
        except PlanError as e:
            why = str(e)
        out.append((i, b, outs[i] if i < len(outs) else None, why))
    return out


def points_of(plan: Plan):
    def points(quick: bool) -> list[Point]:
        return [
            Point({"run": i, "experiment": b.name, "seed": seed}, {**scenario(f"{plan.file}.txt", b), "seed": seed})
            for i, b, _, why in blocks(plan, quick)
            if why is None
            for seed in (HASH_SEEDS if single_path(b) else [1])
        ]

    return points


def measured(runs: list[Run]) -> pd.DataFrame:
    """One row per block: the median over its seeds (one but for a single path's), and the
    range of its tail FCT."""
    rows = []
    for r in runs:
        t = r.result.tables["transfers"]
        # htsim's FCT ("finished at", `UecSrc::checkFinished`): start to the sender's last
        # byte acknowledged.
        fct = t.send_done_us - t.start_us
        s = r.result.summary
        done = bool(fct.notna().all()) and len(fct) > 0
        rows.append(
            {
                **r.labels,
                "tail_us": float(fct.max()) if done else math.nan,
                "spread_min_us": float(fct.min()) if done else math.nan,
                "finished": int(fct.notna().sum()),
                "transfers": len(fct),
                "rtx": s["retransmits"],
                "acks": s["acks"],
                "trims": s["trims"],
                "timeouts": s["timeouts"],
            }
        )
    d = pd.DataFrame(rows)
    g = d.groupby(["run", "experiment"], sort=False)
    out = (
        g[["tail_us", "spread_min_us", "rtx", "acks", "trims", "timeouts", "finished", "transfers"]]
        .median()
        .reset_index()
    )
    out["tail_min_us"], out["tail_max_us"], out["seeds"] = (
        g.tail_us.min().values,
        g.tail_us.max().values,
        g.size().values,
    )
    return out


def off(a: float, b: float) -> float:
    return abs(a - b) / b


def tail_checks(d: pd.DataFrame, credits: bool) -> list[Check]:
    """The NSCC, RCCC and both plans' criteria: tail FCT within `TAIL_TOLERANCES` of htsim's, a
    single path much slower than 128 EVs; with receiver credits, the 16-node incast's senders
    finishing together, as htsim's do (its spread, last over first FCT, 1.04)."""
    v = d.set_index("experiment")
    out = []
    for name, tol in TAIL_TOLERANCES:
        if name not in v.index:
            continue
        r = v.loc[name]
        holds = bool(np.isfinite(r.tail_us) and off(r.tail_us, r.htsim_tail_us) <= tol)
        over = (
            f" (the median of {int(r.seeds)} hash seeds, {r.tail_min_us:.1f} to {r.tail_max_us:.1f})"
            if r.seeds > 1
            else ""
        )
        out.append(
            Check(
                f"{name}: the last transfer finishes within {tol:.0%} of htsim's",
                holds,
                f"{r.tail_us:.1f} µs{over} against htsim's {r.htsim_tail_us:.1f} ({r.tail_us / r.htsim_tail_us - 1:+.1%})",
            )
        )
    if {"Small permutation (16 nodes)", "Small permutation, single path."} <= set(v.index):
        sprayed, single = v.loc["Small permutation (16 nodes)"], v.loc["Small permutation, single path."]
        out.append(
            Check(
                "One entropy value per connection (ECMP's collisions) is much slower than 128 sprayed",
                bool(single.tail_us > 2 * sprayed.tail_us),
                f"{single.tail_us:.1f} against {sprayed.tail_us:.1f} µs (htsim: {single.htsim_tail_us:.1f} against "
                f"{sprayed.htsim_tail_us:.1f})",
            )
        )
    if credits and "Small 16 node incast" in v.index:
        r = v.loc["Small 16 node incast"]
        spread, htsim = r.tail_us / r.spread_min_us, r.htsim_tail_us / r.htsim_spread_min_us
        out.append(
            Check(
                "Receiver credits share a 16-node incast fairly: the FCT spread (last over first) at most 1.10",
                bool(spread <= 1.10),
                f"{spread:.3f} against htsim's {htsim:.3f}",
            )
        )
    return out


def failed_checks(d: pd.DataFrame) -> list[Check]:
    """On eight slow core links htsim orders the balancers oblivious > bitmap > REPS by tail FCT."""
    v = d.set_index("experiment")
    names = {
        "oblivious": "Large permutation, oblivious (1024 nodes), 8 core links running at 10% capacity",
        "bitmap": "Large permutation, bitmap (1024 nodes), 8 core links running at 10% capacity",
        "REPS": "Large permutation, REPS, 1SACK/packet (1024 nodes), 8 core links running at 10% capacity",
    }
    if not set(names.values()) <= set(v.index):
        return []
    t = {k: v.loc[n].tail_us for k, n in names.items()}
    h = {k: v.loc[n].htsim_tail_us for k, n in names.items()}
    return [
        Check(
            "Oblivious spraying is slowest and REPS fastest when links fail (htsim's order)",
            bool(t["oblivious"] > t["bitmap"] > t["REPS"]),
            ", ".join(f"{k} {t[k]:.1f}" for k in t) + " µs (htsim: " + ", ".join(f"{k} {h[k]:.1f}" for k in h) + ")",
        )
    ]


@styled
def plot(d: pd.DataFrame) -> Any:
    """Tail FCT per run, rttlab's beside htsim's."""
    fig, (ax,) = subplots(1, 1, width=7.0, height=2.6)
    x = np.arange(len(d))
    ax.bar(x - 0.2, d.tail_us, 0.4, label="rttlab")
    ax.bar(x + 0.2, d.htsim_tail_us, 0.4, label="htsim_uec")
    ax.set_xticks(x, [str(i) for i in d.run], fontsize=7)
    ax.set(xlabel="run (the plan's block)", ylabel="tail FCT (µs)", yscale="log")
    ax.legend(fontsize=7)
    return fig


def reuse_checks(d: pd.DataFrame) -> list[Check]:
    """The connection-reuse plan's criteria: every run's tail within 5 % of htsim's (one
    connection on an idle fabric), and ten messages on one connection finishing as one message
    of their total size does, as htsim's (runs whose htsim tails are equal, under one
    controller, have equal tails)."""
    off_by = [off(r.tail_us, r.htsim_tail_us) for r in d.itertuples()]
    same = d.groupby([d.htsim_tail_us, d.experiment.str.split(", ").str[-1]]).tail_us
    spread = (same.max() - same.min()).max()
    return [
        Check(
            "every run's tail FCT within 5 % of htsim's",
            bool(np.isfinite(off_by).all() and max(off_by) <= 0.05),
            f"at most {max(off_by):.1%} off ({', '.join(f'{t:.2f}' for t in d.tail_us)} µs)",
        ),
        Check(
            "ten messages on one connection finish as one message of their total size does",
            bool(spread < 1e-3),
            f"tails of the same bytes under one controller differ by at most {spread * 1e3:.1f} ns",
        ),
    ]


def analyse_of(plan: Plan):
    def analyse(runs: list[Run], quick: bool) -> Outcome:
        listed = blocks(plan, quick)
        d = (
            measured(runs)
            if runs
            else pd.DataFrame(columns=["run", "experiment", "tail_us", "spread_min_us", "rtx", "acks"])
        )
        ref = {i: o for i, _, o, _ in listed}
        d["htsim_tail_us"] = [ref[i].tail_us if ref[i] else math.nan for i in d.run]
        d["htsim_spread_min_us"] = [ref[i].spread_min_us if ref[i] else math.nan for i in d.run]
        d["htsim_rtx"] = [ref[i].rtx if ref[i] else math.nan for i in d.run]
        d["htsim_acks"] = [ref[i].acks if ref[i] else math.nan for i in d.run]
        rows = []
        for r in d.itertuples():
            rows += [
                ref_row(f"{r.run}. {r.experiment}: tail FCT", "µs", r.tail_us, r.htsim_tail_us),
                ref_row(
                    f"{r.run}. {r.experiment}: FCT spread (max/min)",
                    "",
                    r.tail_us / r.spread_min_us,
                    r.htsim_tail_us / r.htsim_spread_min_us,
                ),
                ref_row(f"{r.run}. {r.experiment}: retransmissions", "", r.rtx, r.htsim_rtx),
                ref_row(f"{r.run}. {r.experiment}: ACKs", "", r.acks, r.htsim_acks),
            ]
        if plan.name in ("uec-sender", "uec-receiver", "uec-both"):
            checks = tail_checks(d, credits=plan.name != "uec-sender")
        elif plan.name == "uec-connreuse":
            checks = reuse_checks(d)
        else:
            checks = failed_checks(d) if "failed" in plan.name else []
        skipped = [f"{i}. {b.name} ({why})" for i, b, _, why in listed if why]
        far = [
            f"{r.run}. {r.experiment} ({r.tail_us / r.htsim_tail_us - 1:+.0%})"
            for r in d.itertuples()
            if np.isfinite(r.tail_us) and off(r.tail_us, r.htsim_tail_us) > 0.10
        ]
        discussion = (
            "Each run is htsim_uec's plan block as written, its flags mapped onto a scenario (the first run's is below) on "
            "the fabric htsim builds without -topo: a 3-tier fat-tree sized from the matrix, 100 Gbps and 1 µs per link, "
            "4150 B packets with 64 B headers, trimming, one BDP of queue per port (43 packets), ECN between 20 % and 80 % "
            "of it, NSCC with three quarters of the unloaded RTT as its target, htsim's retransmission timeout; with "
            "receiver credits (-receiver_cc_only, -receiver_cc) a credit window of 1.5 BDP, pulls at 0.99 of the line "
            "rate, 16 KiB each, and no ECN on the ToR downlinks, as htsim's. "
            "A transfer's FCT is htsim's: from its start to its sender having every byte acknowledged. "
            "htsim's numbers are its own validate.py output at the commit the plans come from. What is not htsim's: "
            "switches hash (connection, entropy value) with rttlab's hash, not htsim's, so which connections share a "
            "link differs; a run on one entropy value per connection is a draw of ECMP collisions, run over "
            f"{len(HASH_SEEDS)} seeds (each a hash) and reported as their median with its range; NSCC's base RTT is the fabric's largest, where htsim takes "
            "each pair's; ACKs echo the data packet's send time where htsim looks it up. "
            + (
                f"Runs more than 10 % from htsim's tail, not explained yet: {'; '.join(far)}. "
                if far
                else "Every run is within 10 % of htsim's tail. "
            )
            + (f"Not run: {'; '.join(skipped)}." if skipped else "")
        )
        return Outcome(figure=plot(d), table=pd.DataFrame(rows), checks=checks, data={"runs": d}, discussion=discussion)

    return analyse


for _plan in PLANS:
    register(
        Experiment(
            name=_plan.name,
            group="uec",
            title=_plan.title,
            paper=f"htsim_uec's validation plan {_plan.file}.txt and the output htsim printed for it (uet-htsim, BSD).",
            points=points_of(_plan),
            analyse=analyse_of(_plan),
            reference="htsim",
        )
    )
