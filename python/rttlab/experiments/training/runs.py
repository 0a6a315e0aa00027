"""Every scheme on every workload, fabric and path choice, and the four analyses.

Fabrics: a k = 8 fat-tree (128 hosts, full bisection) and a leaf-spine of 8 leaves of 16 hosts
and 4 spines at 4:1 (its uplinks 100 Gbps each), every link 100 Gbps and 1 µs, 32 MB of shared
buffer per switch, 1000 B payloads. The quick form: a k = 4 fat-tree and a 4-leaf, 2-spine
leaf-spine at 4:1 (16 hosts each).

Schemes, each with what it is deployed with: DCQCN, HPCC and TIMELY on RoCE's message transport
over PFC; DCTCP (marks at K = 30 KB per 10 Gbps) and Swift on the window transport with RACK; UET
(`transport.kind = "uet"`) with NSCC alone or with receiver credits, over switches that trim and
mark ECN between 20 % and 80 % of a BDP of queue (htsim_uec's fabric, `uec` experiments). Path
choice: per-flow ECMP, or each scheme's best per-packet mode — REPS for the others (selective
repeat on the message transport; REPS matched or beat plain spraying for every scheme of
`collectives` and for DCTCP's permutation in `multipath`), UET's own entropy-value balancer (htsim_uec's
default, `mixed`, over 64 entropy values). Jobs keep their connections (`jobs.connections =
"persistent"`, as NCCL does) and run two iterations: the first opens the windows, the second is
the steady state.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row, summary_row
from ..multipath.common import DCQCN, DCTCP, SWIFT, small_flow_p99
from ..multipath.permutation import permutation

RATE_GBPS = 100
MTU, HEADER, ACK = 1064, 64, 64
#: (fat-tree k, leaves, hosts per leaf, spines, ranks, ring buffer, all-to-all buffer,
#: incast bytes per sender, permutation bytes per host, WebSearch's warm-up and the ms the ring
#: runs beside it).
FULL = dict(
    k=8, leaves=8, per_leaf=16, spines=4, ranks=32, ring="8MB", moe="2MB", incast="1MB", perm="2MB", web=(1.0, 5.0)
)
QUICK = dict(
    k=4, leaves=4, per_leaf=4, spines=2, ranks=8, ring="1MB", moe="256KB", incast="1MB", perm="2MB", web=(0.2, 1.0)
)
FABRICS = ["fat-tree", "leaf-spine 4:1"]
MODES = ["ECMP", "per-packet"]
SCHEMES = ["UET NSCC", "UET NSCC+RCCC", "DCQCN", "HPCC", "Swift", "TIMELY", "DCTCP"]
QUICK_SCHEMES = ["UET NSCC", "UET NSCC+RCCC", "DCQCN", "Swift"]
#: Small flows, whose p99 slowdown the mixed workload reports.
SMALL_BYTES = 100_000


def shape(quick: bool) -> dict[str, Any]:
    return QUICK if quick else FULL


def size_bytes(text: str) -> float:
    """``"2MB"`` or ``"100KB"`` in bytes (decimal, as scenarios read them)."""
    for unit, scale in (("MB", 1e6), ("KB", 1e3)):
        if text.endswith(unit):
            return float(text.removesuffix(unit)) * scale
    raise ValueError(f"size = {text!r}: in KB or MB")


def hosts(fabric: str, quick: bool) -> int:
    c = shape(quick)
    return c["k"] ** 3 // 4 if fabric == "fat-tree" else c["leaves"] * c["per_leaf"]


def topology(fabric: str, quick: bool) -> dict[str, Any]:
    c = shape(quick)
    link = {"link_rate": f"{RATE_GBPS}Gbps", "link_delay": "1us"}
    if fabric == "fat-tree":
        return {"kind": "fat_tree", "k": c["k"], **link}
    return {
        "kind": "leaf_spine",
        "leaves": c["leaves"],
        "spines": c["spines"],
        "hosts_per_leaf": c["per_leaf"],
        "oversubscription": 4,
        **link,
    }


def diameter_links(fabric: str) -> int:
    """Links on the longest host-to-host path: 6 through a fat-tree's core, 4 over a spine."""
    return 6 if fabric == "fat-tree" else 4


def unloaded_rtt_us(fabric: str) -> float:
    """The longest unloaded RTT: 1 µs a link both ways, a data packet and an ACK serialized on
    each link (htsim's `calculate_rtt`)."""
    links = diameter_links(fabric)
    return 2 * links + links * (MTU + ACK) * 8 / (RATE_GBPS * 1e3)


def uet(fabric: str, congestion: str) -> dict[str, Any]:
    """Ultra Ethernet as htsim_uec runs it: trimming at a BDP of queue, ECN from 20 % to 80 % of
    it; with receiver credits the ToR downlinks mark nothing."""
    bdp = unloaded_rtt_us(fabric) * 1e-6 * RATE_GBPS * 1e9 / 8
    packets = math.ceil(bdp / MTU)
    s: dict[str, Any] = {
        "transport": {"kind": "uet", "congestion": congestion},
        "cc": {"algorithm": "nscc"},
        "switch.trimming": "either",
        "switch.queue_limit": f"{packets * MTU}B",
        "switch.ecn": {
            "kmin": f"{math.ceil(packets * 0.2) * MTU}B",
            "kmax": f"{math.ceil(packets * 0.8) * MTU}B",
            "pmax": 1.0,
        },
    }
    if congestion != "nscc":
        s["switch.ports"] = [{"ports": ["s*-h*"], "ecn": False}]
    return s


def scheme_settings(scheme: str, fabric: str) -> dict[str, Any]:
    return {
        "UET NSCC": lambda: uet(fabric, "nscc"),
        "UET NSCC+RCCC": lambda: uet(fabric, "both"),
        "DCQCN": lambda: DCQCN,
        "HPCC": lambda: {"cc": {"algorithm": "hpcc"}, "switch.pfc": True},
        "Swift": lambda: SWIFT,
        "TIMELY": lambda: {**DCQCN, "cc": {"algorithm": "timely"}},
        "DCTCP": lambda: DCTCP,
    }[scheme]()


def routing(scheme: str, mode: str) -> dict[str, Any]:
    if mode == "ECMP":
        return {"mode": "ecmp"}
    if scheme.startswith("UET"):
        return {"mode": "spray", "spray": "mixed", "entropies": 64}
    return {"mode": "spray", "spray": "reps"}


def base(name: str, scheme: str, mode: str, fabric: str, quick: bool) -> dict[str, Any]:
    s: dict[str, Any] = {
        "name": name,
        "seed": 1,
        # The longest a run may take; each ends when its transfers are done.
        "duration": "20ms",
        "until": "flows_done",
        "topology": topology(fabric, quick),
        "switch": {"buffer": "32MB", "pfc": False},
        "nic": {"mtu": f"{MTU}B", "header": f"{HEADER}B", "ack": f"{ACK}B"},
        "routing": routing(scheme, mode),
    }
    for key, value in scheme_settings(scheme, fabric).items():
        set_key(s, key, copy.deepcopy(value))
    if mode != "ECMP" and s.get("transport", {}).get("kind", "message") == "message":
        set_key(s, "nic.recovery", "selective_repeat")
    return s


def spread(fabric: str, quick: bool, offset: int) -> list[int]:
    """Ranks dealt over the pods (or leaves) in turn, so that ring neighbours are in different
    ones and their traffic crosses the core (or a spine); `offset` picks another host of each
    rack."""
    c = shape(quick)
    if fabric == "fat-tree":
        k = c["k"]
        pod, rack = k * k // 4, k // 2
        return [(i % k) * pod + (i // k) * rack % pod + offset for i in range(c["ranks"])]
    leaves, per_leaf = c["leaves"], c["per_leaf"]
    return [(i % leaves) * per_leaf + (2 * (i // leaves) + offset) % per_leaf for i in range(c["ranks"])]


def ring(fabric: str, quick: bool, **extra: Any) -> dict[str, Any]:
    job = {"collective": "allreduce_ring", "hosts": spread(fabric, quick, 0), "size": shape(quick)["ring"]}
    return {**job, "iterations": 2, "connections": "persistent", **extra}


def moe(fabric: str, quick: bool) -> dict[str, Any]:
    hosts_ = spread(fabric, quick, 1)
    return {
        "collective": "alltoall",
        "hosts": hosts_,
        "size": shape(quick)["moe"],
        "skew": 1.0,
        "iterations": 2,
        "connections": "persistent",
    }


def web_load(fabric: str) -> float:
    """WebSearch's load per host: half of each host's link on the fat-tree; on the 4:1
    leaf-spine half of what its spines carry (a quarter of that), as nearly every flow
    crosses them."""
    return 0.5 if fabric == "fat-tree" else 0.5 / 4


def workload(name: str, s: dict[str, Any], fabric: str, quick: bool) -> dict[str, Any]:
    n = hosts(fabric, quick)
    c = shape(quick)
    if name == "ring all-reduce":
        s["jobs"] = [ring(fabric, quick)]
    elif name == "MoE all-to-all":
        s["jobs"] = [moe(fabric, quick)]
    elif name == "incast":
        s["duration"] = "40ms"
        s["flows"] = [{"src": f"1-{n - 1}", "dst": 0, "size": c["incast"]}]
    elif name == "permutation":
        s["flows"] = [{"src": f"0-{n - 1}", "dst": permutation(n, 1), "size": c["perm"]}]
    elif name == "WebSearch + ring":
        # The ring starts when the WebSearch load has warmed up and runs beside it for a set
        # time: its steps' pace is what it keeps (beside 50 % load many never finish a run).
        warm, beside = c["web"]
        s.update(until="duration", duration=f"{warm + beside:g}ms", warmup=f"{warm:g}ms")
        s["workloads"] = [{"kind": "flow_sizes", "cdf": "websearch", "load": web_load(fabric), "hosts": f"0-{n - 1}"}]
        s["jobs"] = [ring(fabric, quick, start=f"{warm:g}ms")]
    return s


def points_of(workloads: list[str]):
    def points(quick: bool) -> list[Point]:
        out = []
        for w in workloads:
            for fabric in FABRICS:
                for scheme in QUICK_SCHEMES if quick else SCHEMES:
                    for mode in MODES:
                        labels = {"workload": w, "fabric": fabric, "scheme": scheme, "mode": mode}
                        name = f"training {w} {fabric} {scheme} {mode}"
                        out.append(Point(labels, workload(w, base(name, scheme, mode, fabric, quick), fabric, quick)))
        return out

    return points


def job_slowdowns(r: Run) -> tuple[float, float]:
    """The job's completion over its ideal in its first and second iteration (NaN: unfinished)."""
    j = r.result.jobs
    v = [float(j.slowdown.iloc[i]) if i < len(j) else np.nan for i in range(2)]
    return v[0], v[1]


def best(d: pd.DataFrame, value: str, lower: bool = True) -> pd.DataFrame:
    """Per workload, fabric and scheme, its better path choice's row."""
    key = d[value].fillna(np.inf if lower else -np.inf)
    order = key.groupby([d.workload, d.fabric, d.scheme]).transform("min" if lower else "max")
    return d[key == order].drop_duplicates(["workload", "fabric", "scheme"])


def grid_plot(d: pd.DataFrame, value: str, label: str):
    """One row per workload, one panel per fabric: each scheme's two path choices side by side,
    a run that did not finish marked."""
    fig, axes = subplots(len(FABRICS), d.workload.nunique(), width=7.0, height=3.0 * d.workload.nunique())
    i = 0
    for w in dict.fromkeys(d.workload):
        for fabric in FABRICS:
            ax = axes[i]
            i += 1
            g = d[(d.workload == w) & (d.fabric == fabric)]
            schemes = list(dict.fromkeys(g.scheme))
            for j, mode in enumerate(MODES):
                v = g[g["mode"] == mode].set_index("scheme").reindex(schemes)[value]
                x = np.arange(len(schemes)) + j * 0.4
                ax.bar(x, v, width=0.4, label=mode)
                for xi in x[v.isna().to_numpy()]:
                    ax.text(xi, 0, "unfinished", rotation=90, ha="center", va="bottom", fontsize=5)
            ax.set_xticks(np.arange(len(schemes)) + 0.2, schemes, rotation=60, ha="right", fontsize=6)
            ax.set_title(f"{w}, {fabric}", fontsize=7)
            ax.set(ylabel=label)
    axes[0].legend(fontsize=6, frameon=False)
    return fig


def frame(runs: list[Run], row) -> pd.DataFrame:
    """Each run's labels, `row`'s values and what decides a run that does not finish: its
    pauses, drops, retransmissions (spurious ones among them) and timeouts."""
    keys = ["pauses", "drops", "retransmits", "spurious_retransmits", "timeouts"]
    return pd.DataFrame([summary_row(r, keys, **row(r)) for r in runs])


def unfinished_note(d: pd.DataFrame, value: str) -> str:
    """Which runs did not finish in the run's time, and what they paid."""
    missing = d[d[value].isna()]
    if missing.empty:
        return "every scheme finished every run"
    return "not finished within the run: " + "; ".join(
        f"{r.scheme} ({r.mode}) on the {r.fabric}, {r.workload} ({r.pauses} pauses, {r.drops} drops, "
        f"{r.retransmits} retransmissions of which {r.spurious_retransmits} spurious, {r.timeouts} timeouts)"
        for r in missing.itertuples()
    )


# --- training-collectives --------------------------------------------------------------------


@styled
def collectives_plot(d: pd.DataFrame) -> Any:
    return grid_plot(d, "second", "completion / ideal, 2nd iteration")


def collectives_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = frame(runs, lambda r: dict(zip(("first", "second"), job_slowdowns(r))))
    c = shape(quick)
    ring_ft = d[(d.workload == "ring all-reduce") & (d.fabric == "fat-tree")].set_index(["scheme", "mode"]).second
    swift = ring_ft.get(("Swift", "per-packet"), np.nan)
    first_swift = d.set_index(["workload", "fabric", "scheme", "mode"]).first.get(
        ("ring all-reduce", "fat-tree", "Swift", "per-packet"), np.nan
    )
    top = best(d, "second")
    moe = top[(top.workload == "MoE all-to-all") & (top.fabric == "fat-tree")].set_index("scheme").second
    moe_pfc = moe[moe.index.isin(["DCQCN", "TIMELY"])]
    moe_lossy = moe[moe.index.str.startswith("UET") | moe.index.isin(["Swift", "DCTCP"])]
    checks = [
        Check(
            "every scheme finishes every collective, no faster than the bandwidth-optimal time",
            bool(d.second.notna().all() and (d[["first", "second"]].min(axis=1) >= 1.0).all()),
            unfinished_note(d, "second") + f"; slowdowns {d.second.min():.2f} to {d.second.max():.2f}",
        ),
        Check(
            "on persistent connections Swift's ring all-reduce, its windows open, runs within 15 % of the best scheme's (on a fresh connection per step: 14.8× its ideal, `collectives`)",
            bool(swift < 1.15 * ring_ft.min()),
            f"fat-tree, per-packet paths, 2nd iteration: Swift {swift:.2f}× its ideal (1st: {first_swift:.2f}×), the best {ring_ft.min():.2f}× ({ring_ft.idxmin()[0]})",
        ),
        Check(
            "per-packet path choice brings the ring closer to its ideal than ECMP for most schemes on the fat-tree",
            sum(
                ring_ft.get((s, "per-packet"), np.inf) < 0.98 * ring_ft.get((s, "ECMP"), np.inf)
                for s in dict.fromkeys(d.scheme)
            )
            * 2
            > d.scheme.nunique(),
            "; ".join(
                f"{s}: ECMP {ring_ft.get((s, 'ECMP'), np.nan):.2f}, per-packet {ring_ft.get((s, 'per-packet'), np.nan):.2f}"
                for s in dict.fromkeys(d.scheme)
            ),
        ),
        Check(
            "rttlab's finding: the skewed all-to-all, an incast at its popular ranks, costs PFC's DCQCN and TIMELY more than the schemes that drop or trim (UET, Swift, DCTCP)",
            bool(moe_pfc.min() > moe_lossy.max()),
            "fat-tree, each its better path choice: "
            + ", ".join(f"{s} {x:.2f}" for s, x in pd.concat([moe_pfc, moe_lossy]).items()),
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{r.workload}, {r.fabric}: {r.scheme} ({r.mode}), 2nd iteration / ideal", "", r.second, None)
            for r in top.itertuples()
        ]
    )
    discussion = (
        f"A ring all-reduce of {c['ring']} per rank and, in runs of their own, a mixture-of-experts all-to-all of "
        f"{c['moe']} per rank with Zipf-skewed expert load (`skew = 1`: rank 0 receives about a quarter of every "
        f"buffer), each over {c['ranks']} ranks dealt across the pods (or leaves), two iterations on persistent "
        "connections; completion over the bandwidth-optimal time, the second iteration's (the first opens the "
        "windows: Swift's and DCTCP's start at one packet and a few). The table gives each scheme's better path "
        "choice. " + unfinished_note(d, "second") + ". HPCC keeps per-hop state that assumes one path: fed the "
        "telemetry of sprayed packets it misjudges its links and stalls (as in `collectives`)."
    )
    return Outcome(
        figure=collectives_plot(d), table=table, checks=checks, data={"collectives": d}, discussion=discussion
    )


# --- training-incast -------------------------------------------------------------------------


def incast_row(r: Run) -> dict[str, Any]:
    fct = r.result.flows.finish_us - r.result.flows.start_us
    done = bool(fct.notna().all())
    return {
        "last_fct_us": float(fct.max()) if done else np.nan,
        "spread": float(fct.max() / fct.min()) if done else np.nan,
        "trims": int(r.result.summary["trims"]),
    }


@styled
def incast_plot(d: pd.DataFrame) -> Any:
    return grid_plot(d, "last_fct_us", "last FCT (µs)")


def incast_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = frame(runs, incast_row)
    n = hosts("fat-tree", quick) - 1
    v = d.set_index(["fabric", "scheme", "mode"]).sort_index()
    ideal_us = n * size_bytes(shape(quick)["incast"]) * (MTU / (MTU - HEADER)) * 8 / (RATE_GBPS * 1e3)
    rccc, nscc = v.loc[("fat-tree", "UET NSCC+RCCC", "per-packet")], v.loc[("fat-tree", "UET NSCC", "per-packet")]
    checks = [
        Check(
            "every scheme finishes the incast",
            bool(d.last_fct_us.notna().all()),
            unfinished_note(d, "last_fct_us") + f"; the receiver's link alone takes {ideal_us:.0f} µs",
        ),
        Check(
            "receiver credits keep the incast's senders together where NSCC alone spreads them (htsim: FCT spread 1.04 against 1.95 on 16 nodes)",
            bool(rccc.spread < nscc.spread),
            f"fat-tree, per-packet: NSCC + receiver credits {rccc.spread:.2f}, NSCC {nscc.spread:.2f} (last FCT {rccc.last_fct_us:.0f} against {nscc.last_fct_us:.0f} µs)",
        ),
        Check(
            "PFC's schemes lose nothing and pause; the others drop or trim and retransmit",
            bool((d[d.scheme.isin(["DCQCN", "HPCC", "TIMELY"])].drops == 0).all()),
            "; ".join(
                f"{r.scheme}: {r.pauses} pauses, {r.drops} drops, {r.trims} trims, {r.retransmits} resent"
                for r in d[(d.fabric == "fat-tree") & (d["mode"] == "per-packet")].itertuples()
            ),
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{r.fabric}: {r.scheme} ({r.mode}), last FCT", "µs", r.last_fct_us, None)
            for r in best(d, "last_fct_us").itertuples()
        ]
        + [
            ref_row("UET NSCC+RCCC, fat-tree: FCT spread", "", rccc.spread, 1.04),
            ref_row("UET NSCC, fat-tree: FCT spread", "", nscc.spread, 1.95),
        ]
    )
    discussion = (
        f"Every other host sends {shape(quick)['incast']} to host 0 at once ({n}-to-1); the last FCT against the "
        f"{ideal_us:.0f} µs the receiver's link takes for the bytes with their headers, the spread (last over first "
        "FCT), and what each scheme paid: PFC pauses, drops, trims and retransmissions. htsim's spreads are from its "
        "own 16-node incast (`uec` experiments run it)."
    )
    return Outcome(figure=incast_plot(d), table=table, checks=checks, data={"incast": d}, discussion=discussion)


# --- training-permutation --------------------------------------------------------------------


def capacity_gbps(fabric: str, quick: bool) -> float:
    """What the permutation can carry: every host's line rate on the fat-tree; on the leaf-spine,
    the flows within a leaf at line rate and those between leaves at most each leaf's uplinks."""
    n, c = hosts(fabric, quick), shape(quick)
    if fabric == "fat-tree":
        return n * RATE_GBPS
    dst = permutation(n, 1)
    per_leaf = c["per_leaf"]
    uplinks = per_leaf * RATE_GBPS / 4
    leaf = [h // per_leaf for h in range(n)]
    out = np.bincount([leaf[h] for h in range(n) if leaf[h] != leaf[dst[h]]], minlength=c["leaves"])
    into = np.bincount([leaf[dst[h]] for h in range(n) if leaf[h] != leaf[dst[h]]], minlength=c["leaves"])
    local = sum(leaf[h] == leaf[dst[h]] for h in range(n))
    cross = min(np.minimum(out * RATE_GBPS, uplinks).sum(), np.minimum(into * RATE_GBPS, uplinks).sum())
    return local * RATE_GBPS + float(cross)


@styled
def permutation_plot(d: pd.DataFrame) -> Any:
    return grid_plot(d, "of_capacity", "throughput / capacity")


def permutation_analyse(runs: list[Run], quick: bool) -> Outcome:
    size = size_bytes(shape(quick)["perm"])

    def row(r: Run) -> dict[str, Any]:
        fct = r.result.flows.finish_us - r.result.flows.start_us
        return {"last_fct_us": float(fct.max()) if fct.notna().all() else np.nan}

    d = frame(runs, row)
    d["of_capacity"] = [
        hosts(x.fabric, quick) * size * 8 / (x.last_fct_us * 1e3) / capacity_gbps(x.fabric, quick)
        for x in d.itertuples()
    ]
    v = d.set_index(["fabric", "scheme", "mode"]).sort_index()
    fct = v.last_fct_us
    gain = fct[("fat-tree", "UET NSCC", "ECMP")] / fct[("fat-tree", "UET NSCC", "per-packet")]
    checks = [
        Check(
            "UET's entropy-value balancer finishes the fat-tree's permutation well before one path per connection does (htsim: 2.7× at 16 nodes, 4.4× at 1024)",
            bool(gain > 1.5),
            f"UET NSCC: last FCT {fct[('fat-tree', 'UET NSCC', 'ECMP')]:.0f} µs with one path, {fct[('fat-tree', 'UET NSCC', 'per-packet')]:.0f} µs sprayed ({gain:.2f}×)",
        ),
        Check(
            "per-packet path choice raises the share of the fat-tree's capacity of every scheme that finishes",
            bool(
                all(
                    v.of_capacity[("fat-tree", s, "per-packet")] > v.of_capacity[("fat-tree", s, "ECMP")]
                    for s in dict.fromkeys(d.scheme)
                    if v.of_capacity[("fat-tree", s, "per-packet")] > 0
                )
            ),
            "; ".join(
                f"{s}: {v.of_capacity[('fat-tree', s, 'ECMP')]:.0%} → {v.of_capacity[('fat-tree', s, 'per-packet')]:.0%}"
                for s in dict.fromkeys(d.scheme)
            ),
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{r.fabric}: {r.scheme} ({r.mode}), of capacity", "%", 100 * r.of_capacity, None)
            for r in best(d, "of_capacity", lower=False).itertuples()
        ]
        + [ref_row("UET NSCC, fat-tree: one path over sprayed, last FCT", "×", gain, None)]
    )
    discussion = (
        f"Every host sends {shape(quick)['perm']} to one other and receives as much from one (a random derangement); "
        "the share of the capacity is the bytes over the last FCT, over what the permutation can carry: every host's "
        "line rate on the fat-tree; on the 4:1 leaf-spine, the flows within a leaf at line rate and those between "
        "leaves at most their leaves' uplinks. htsim's gains are the same measure, the tail FCT, on its 16- and "
        "1024-node fat-trees. Swift's share stays low with any paths: each connection starts from a window of one "
        "packet and adds about one a round trip, which 2 MB outlasts. " + unfinished_note(d, "last_fct_us") + "."
    )
    return Outcome(
        figure=permutation_plot(d), table=table, checks=checks, data={"permutation": d}, discussion=discussion
    )


# --- training-mixed --------------------------------------------------------------------------


def mixed_row(r: Run) -> dict[str, Any]:
    """Alone: the ring's time per step in its second iteration (windows open). Beside WebSearch:
    the steps every rank finished in the time it ran, and that time per step (steps overlap
    when ranks drift apart, so a step's own span would overstate it)."""
    steps = r.result.steps
    if r.labels["workload"] == "ring all-reduce":
        per_iteration = int((steps.iteration == 0).sum())
        return {"per_step_alone_us": float(r.result.jobs.completion_us.iloc[1]) / per_iteration}
    done = int(steps.end_us.notna().sum())
    beside_us = r.result.summary["measured_s"] * 1e6  # the ring starts with the measured time
    return {
        "steps_done": done,
        "per_step_us": beside_us / done if done else np.nan,
        "small_p99": small_flow_p99(r.result.fct, SMALL_BYTES),
    }


@styled
def mixed_plot(d: pd.DataFrame) -> Any:
    fig, (ax,) = subplots(1, 1, width=6.0, height=3.6)
    colours = {s: f"C{i}" for i, s in enumerate(dict.fromkeys(d.scheme))}
    for (scheme, mode), g in d.groupby(["scheme", "mode"], sort=False):
        marker = "o" if mode == "ECMP" else "^"
        ax.scatter(g.small_p99, g.beside, label=f"{scheme} ({mode})", s=14, marker=marker, color=colours[scheme])
    ax.set(
        xlabel=f"p99 slowdown, flows ≤ {SMALL_BYTES // 1000} KB",
        ylabel="ring's step beside WebSearch / alone",
        xscale="log",
        yscale="log",
    )
    ax.legend(fontsize=5, frameon=False, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def mixed_analyse(runs: list[Run], quick: bool) -> Outcome:
    d = frame(runs, mixed_row)
    alone = d[d.workload == "ring all-reduce"].set_index(["fabric", "scheme", "mode"]).per_step_alone_us
    d = d[d.workload == "WebSearch + ring"].copy()
    d["beside"] = [r.per_step_us / alone[(r.fabric, r.scheme, r.mode)] for r in d.itertuples()]
    v = d.set_index(["fabric", "scheme", "mode"]).sort_index()

    def best_of(s: str) -> pd.Series:
        g = v.loc[("fat-tree", s)]
        return g.loc[g.small_p99.fillna(np.inf).idxmin()]

    uet_, swift = best_of("UET NSCC"), best_of("Swift")
    gain = 1 - uet_.small_p99 / swift.small_p99
    roce = d[(d.fabric == "fat-tree") & (d["mode"] == "per-packet") & d.scheme.isin(["DCQCN", "TIMELY"])].set_index(
        "scheme"
    )
    spurious, resent = roce.spurious_retransmits / roce.retransmits.clip(lower=1), roce.retransmits
    checks = [
        Check(
            "every scheme's ring keeps going beside WebSearch (steps finish)",
            bool((d.steps_done > 0).all()),
            "; ".join(
                f"{r.scheme} ({r.mode}) on the {r.fabric}: {r.steps_done:.0f} steps, each ×{r.beside:.1f}"
                for r in d.itertuples()
            ),
        ),
        Check(
            "rttlab's finding: sprayed beside WebSearch, RoCE's selective repeat resends mostly packets that were only reordered (its reordering threshold is three packets)",
            bool((spurious > 0.5).all()),
            "fat-tree, per-packet: "
            + ", ".join(
                f"{sch} {x:.0%} of {n:,} retransmissions spurious" for (sch, x), n in zip(spurious.items(), resent)
            ),
        ),
        Check(
            "NSCC (SMaRTT's basis) keeps the small flows' tail below Swift's (SMaRTT: up to 50 % lower FCTs than Swift)",
            bool(gain > 0),
            f"fat-tree, each its better path choice: p99 slowdown of flows ≤ {SMALL_BYTES // 1000} KB, NSCC {uet_.small_p99:.1f}, Swift {swift.small_p99:.1f} ({gain:+.0%})",
        ),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{r.fabric}: {r.scheme} ({r.mode}), small flows' p99 slowdown", "", r.small_p99, None)
            for r in d.itertuples()
        ]
        + [
            ref_row(f"{r.fabric}: {r.scheme} ({r.mode}), ring's step beside / alone", "", r.beside, None)
            for r in d.itertuples()
        ]
    )
    warm, beside = shape(quick)["web"]
    discussion = (
        "WebSearch flows between every pair of hosts at 50 % load (of each host's link on the fat-tree; of the spines' "
        f"capacity on the 4:1 leaf-spine, where nearly every flow crosses them), and after {warm:g} ms the ring "
        f"all-reduce of the collectives runs beside it for {beside:g} ms: the small flows' p99 FCT slowdown (flows "
        "started after the warm-up, those under way at the end counted at their age) and the ring's time per step "
        "beside WebSearch (the time it ran over the steps every rank finished) over its time per step alone (its "
        "second iteration's, windows open). At 50 % load on its "
        "hosts' links the ring is one flow among many at each rank: it keeps going at a fraction of its pace alone."
    )
    return Outcome(figure=mixed_plot(d), table=table, checks=checks, data={"mixed": d}, discussion=discussion)


for name, title, paper, workloads, analyse in [
    (
        "training-collectives",
        "Ring all-reduce and skewed all-to-all under each scheme, per-flow ECMP against per-packet paths",
        "No published study runs UET, DCQCN, HPCC, Swift, TIMELY and DCTCP side by side on collective traffic; SMaRTT (NSCC's basis) was compared with Swift, RoCE, MPRDMA, EQDS and BBR, HPCC with DCQCN and TIMELY.",
        ["ring all-reduce", "MoE all-to-all"],
        collectives_analyse,
    ),
    (
        "training-incast",
        "A 127-to-1 incast: last FCT, spread, and what each scheme pays",
        "htsim_uec's validation: receiver credits keep an incast's senders together (FCT spread 1.04) where NSCC alone finishes some first (1.95).",
        ["incast"],
        incast_analyse,
    ),
    (
        "training-permutation",
        "A permutation's share of the fabric's capacity, one path against many",
        "htsim_uec's validation: spreading a permutation over entropy values finishes it 2.7× faster than one path at 16 nodes, 4.4× at 1024.",
        ["permutation"],
        permutation_analyse,
    ),
    (
        "training-mixed",
        "WebSearch at 50 % load beside a ring all-reduce: the small flows' tail and the job's slowdown",
        "SMaRTT (NSCC's basis) reports flow completion times up to 50 % lower than Swift's.",
        ["ring all-reduce", "WebSearch + ring"],
        mixed_analyse,
    ),
]:
    register(
        Experiment(name=name, group="training", title=title, paper=paper, points=points_of(workloads), analyse=analyse)
    )
