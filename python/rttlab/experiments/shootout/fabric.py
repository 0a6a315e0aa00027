"""`rttlab reproduce shootout`: DCQCN (paper and Mellanox profiles), TIMELY, Patched TIMELY,
DCTCP, Swift and HPCC on the HPCC paper's large-scale setting scaled to a k = 8 fat-tree
(reference §9.1): 128 hosts on 100 Gbps links, 400 Gbps fabric links, 1 µs per link, 1000 B
payloads, 32 MB shared buffers with dynamic PFC thresholds (1/8 of the free buffer), WebSearch
and FB_Hadoop flow sizes at 30 % and 50 % load, and FB_Hadoop at 30 % with an incast add-on."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row

#: The HPCC simulator's marking per scheme (reference §9.1), each for a port of `scale_rate`
#: and scaled with the port's rate: DCQCN's and TIMELY's Kmin 400 KB, Kmax 1600 KB, Pmax 0.2
#: at 100 Gbps; DCTCP's K = 30 KB at 10 Gbps. TIMELY, Swift and HPCC read no marks.
RED_100G = {"kmin": "400KB", "kmax": "1600KB", "pmax": 0.2, "scale_rate": "100Gbps"}
DCTCP_K = {"k": "30KB", "scale_rate": "10Gbps"}
#: Message-transport schemes keep no window beyond their controller's (the HPCC simulator's
#: `dcqcn` and `timely`, not their `+w` variants) and pace every packet.
NO_WINDOW = {"nic.max_outstanding": "1TB", "nic.segment": "1000B"}
WINDOW = {"transport": {"kind": "window", "delayed_ack": False}}
SCHEMES: dict[str, dict[str, Any]] = {
    "DCQCN (paper)": {"cc": {"algorithm": "dcqcn", "profile": "paper"}},
    "DCQCN (mellanox)": {"cc": {"algorithm": "dcqcn", "profile": "mellanox"}, "switch.ecn": RED_100G},
    "TIMELY": {"cc": {"algorithm": "timely"}, **NO_WINDOW},
    "Patched TIMELY": {"cc": {"algorithm": "patched_timely"}, **NO_WINDOW},
    "DCTCP": {"cc": {"algorithm": "dctcp"}, "switch.ecn": DCTCP_K, **WINDOW},
    "Swift": {"cc": {"algorithm": "swift"}, **WINDOW},
    "HPCC": {"cc": {"algorithm": "hpcc"}},
}
#: Each incast: 60 senders → 1 receiver, all drawn at random among the 128 hosts (reference
#: §9.1), 500 KB each, at 2 % of the hosts' capacity (128 × 100 Gbps): 256 Gbps over 240 Mbit
#: per incast. A fixed receiver would take 2.56× its link rate, which no scheme can carry.
INCAST = {
    "kind": "incast",
    "senders": "0-127",
    "receiver": "0-127",
    "senders_per_incast": 60,
    "size": "500KB",
    "rate": 0.02 * 128 * 100e9 / (60 * 500e3 * 8),
}
WORKLOADS = {
    "WebSearch 30%": [{"kind": "flow_sizes", "cdf": "websearch", "load": 0.3}],
    "WebSearch 50%": [{"kind": "flow_sizes", "cdf": "websearch", "load": 0.5}],
    "FB_Hadoop 30%": [{"kind": "flow_sizes", "cdf": "fb_hadoop", "load": 0.3}],
    "FB_Hadoop 50%": [{"kind": "flow_sizes", "cdf": "fb_hadoop", "load": 0.5}],
    "FB_Hadoop 30% + incast": [{"kind": "flow_sizes", "cdf": "fb_hadoop", "load": 0.3}, INCAST],
}
QUICK_WORKLOADS = ["FB_Hadoop 30%", "FB_Hadoop 30% + incast"]
#: Log-spaced size buckets, the x axis of the HPCC paper's Fig. 11.
BUCKETS = ["1KB", "3KB", "10KB", "30KB", "100KB", "300KB", "1MB", "3MB", "10MB"]
#: Short flows, whose tail the HPCC paper's claims are about.
SHORT_BYTES = 10_000
#: The buckets whose flows must nearly all finish for their slowdowns to stand for them (the
#: HPCC paper counts every flow).
COUNTED_BYTES = 10_000_000
FINISHED_GOAL = 0.95
#: (warm-up, flows counted) in ms: the FCT statistics count the flows that start in the second
#: period, and a full run goes on under the same load until they have all finished, at most
#: until DRAIN_CAP_MS (the HPCC paper counts every flow); the quick one stops when it ends.
FULL, QUICK = (2, 10), (0.2, 0.8)
DRAIN_CAP_MS = 60


def scenario(scheme: str, workload: str, quick: bool) -> dict[str, Any]:
    warm, measured = QUICK if quick else FULL
    s: dict[str, Any] = {
        "name": re.sub(r"[^a-z0-9]+", "-", f"shootout {scheme} {workload}".lower()).strip("-"),
        "seed": 1,
        "duration": f"{warm + measured:g}ms",
        "warmup": f"{warm:g}ms",
        "topology": {
            "kind": "fat_tree",
            "k": 8,
            "link_rate": "100Gbps",
            "link_delay": "1us",
            "agg_link": {"rate": "400Gbps"},
            "core_link": {"rate": "400Gbps"},
        },
        "switch": {"buffer": "32MB", "pfc": True, "pfc_alpha": 0.125},
        "nic": {"mtu": "1064B"},
        "workloads": WORKLOADS[workload],
        # Every switch-to-switch egress is sampled, for the fabric's queue p99.
        "measure": {"fct_buckets": BUCKETS, "queue_ports": ["s*-s*"]},
    }
    if not quick:
        s.update(duration=f"{DRAIN_CAP_MS}ms", until="flows_done")
        s["measure"]["fct_until"] = f"{warm + measured:g}ms"
    for key, value in SCHEMES[scheme].items():
        set_key(s, key, value)
    return s


def points(quick: bool) -> list[Point]:
    workloads = QUICK_WORKLOADS if quick else list(WORKLOADS)
    return [Point({"scheme": s, "workload": w}, scenario(s, w, quick)) for w in workloads for s in SCHEMES]


FABRIC_PORT = re.compile(r"^s\d+-s\d+$")


def measured(runs: list[Run]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per run: the flow-size workload's slowdown per bucket; and a summary row."""
    buckets, rows = [], []
    for r in runs:
        t, s = r.result.tables, r.result.summary
        fct = t["fct"]
        fct = fct[fct.group == "workloads[0]"]
        for _, b in fct[fct.bucket != "all"].iterrows():
            top = None if pd.isna(b.size_max_bytes) else float(b.size_max_bytes)
            started = int(b.flows_started)
            finished = b.flows / started if started else np.nan
            buckets.append(
                {
                    **r.labels,
                    "size_max_bytes": top,
                    "size_min_bytes": float(b.size_min_bytes),
                    "flows": b.flows,
                    "flows_started": started,
                    "finished": finished,
                    "slowdown_p50": b.slowdown_p50,
                    "slowdown_p95": b.slowdown_p95,
                    "slowdown_p99": b.slowdown_p99,
                }
            )
        sized = fct[fct.bucket != "all"]
        short = sized[sized.size_max_bytes.astype(float).fillna(np.inf) <= SHORT_BYTES]
        # The least finished bucket up to COUNTED_BYTES: what the slowdowns leave out.
        counted = sized[
            (sized.size_max_bytes.astype(float).fillna(np.inf) <= COUNTED_BYTES) & (sized.flows_started > 0)
        ]
        ports = t["ports"]
        fabric = ports[ports.port.astype(str).str.match(FABRIC_PORT)]
        # The workload's row over all sizes; absent when none of its flows finished.
        every = fct[fct.bucket == "all"].head(1).to_dict("records") or [
            {"flows": 0, "slowdown_p50": np.nan, "slowdown_p95": np.nan, "slowdown_p99": np.nan}
        ]
        rows.append(
            {
                **r.labels,
                **{k: every[0][k] for k in ["flows", "slowdown_p50", "slowdown_p95", "slowdown_p99"]},
                # Short flows' tail: the worst bucket's p99 among those up to SHORT_BYTES.
                "short_p99": short.slowdown_p99.max() if len(short) else np.nan,
                "short_p95": short.slowdown_p95.max() if len(short) else np.nan,
                "pauses": s["pauses"],
                # Runs differ in length (each lasts until its counted flows finish): pauses per ms.
                "pauses_per_ms": s["pauses"] / (s["measured_s"] * 1e3),
                "fabric_queue_p99_kb": fabric.queue_p99_kb.max(),
                "throughput_gbps": s["throughput_gbps"],
                "flows_refused": s["refused"],
                "least_finished": (counted.flows / counted.flows_started).min() if len(counted) else np.nan,
                "simulated_ms": r.result.meta["perf"]["simulated_s"] * 1e3,
            }
        )
    return pd.DataFrame(buckets), pd.DataFrame(rows)


@styled
def plot(buckets: pd.DataFrame) -> Any:
    """One panel per workload, three to a row; the legend takes the first free panel."""
    workloads = list(dict.fromkeys(buckets.workload))
    rows = len(workloads) // 3 + 1
    fig, ax = subplots(3, rows, width=7.0, height=2.1 * rows)
    for a, w in zip(ax, workloads):
        d = buckets[buckets.workload == w]
        for scheme, g in d.groupby("scheme", sort=False):
            g = g[g.flows > 0]
            x = g.size_max_bytes.fillna(g.size_min_bytes * 3)
            a.plot(x, g.slowdown_p95, marker="o", markersize=2, linewidth=0.8, label=scheme)
        a.set(xscale="log", yscale="log", xlabel="flow size, bucket's top (B)", ylabel="p95 FCT slowdown", title=w)
    handles, labels = ax[0].get_legend_handles_labels()
    for a in ax[len(workloads) :]:
        a.axis("off")
    ax[len(workloads)].legend(handles, labels, loc="center", fontsize=7, frameon=False)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    buckets, summary = measured(runs)
    v = summary.set_index(["workload", "scheme"])
    checks = []
    for w in dict.fromkeys(summary.workload):
        t = v.loc[w]
        best = t.short_p99.idxmin()
        checks.append(
            Check(
                f"{w}: HPCC has the lowest tail slowdown for short flows (≤ 10 KB, p99)",
                bool(best == "HPCC"),
                ", ".join(f"{s} {t.short_p99[s]:.1f}" for s in t.index),
            )
        )
    if "FB_Hadoop 30% + incast" in v.index.get_level_values(0) and "FB_Hadoop 30%" in v.index.get_level_values(0):
        base, inc = v.loc["FB_Hadoop 30%"], v.loc["FB_Hadoop 30% + incast"]
        infl = inc.short_p99 / base.short_p99
        for s in ["DCQCN (mellanox)", "TIMELY"]:
            checks.append(
                Check(
                    f"the incast inflates {s}'s short-flow tail more than HPCC's, through PFC",
                    bool(infl[s] > infl["HPCC"] and inc.pauses_per_ms[s] > inc.pauses_per_ms["HPCC"]),
                    f"short-flow p99 with / without incast: {s} {inc.short_p99[s]:.1f} / {base.short_p99[s]:.1f} ({infl[s]:.2f}×), HPCC {inc.short_p99['HPCC']:.1f} / {base.short_p99['HPCC']:.1f} ({infl['HPCC']:.2f}×); pauses per ms {s} {inc.pauses_per_ms[s]:.0f}, HPCC {inc.pauses_per_ms['HPCC']:.1f}",
                )
            )
    least = summary.least_finished.min()
    worst = summary.loc[summary.least_finished.idxmin()] if summary.least_finished.notna().any() else None
    checks.append(
        Check(
            f"in every run, at least {FINISHED_GOAL:.0%} of the flows started in each size bucket up to 10 MB finish (the HPCC paper counts every flow)",
            bool(least >= FINISHED_GOAL),
            "least finished fraction per run: "
            + ", ".join(
                f"{r.workload} / {r.scheme} {r.least_finished:.0%}"
                for r in summary.itertuples()
                if pd.notna(r.least_finished)
            )
            + (f"; the least, {least:.0%}, in {worst.workload} under {worst.scheme}" if worst is not None else ""),
        )
    )
    # Per workload and quantity, every scheme in a row after another, so that they compare at a
    # glance; p50 and p95 over all sizes, and every bucket, are in the data files.
    quantities = [
        ("short-flow p99 slowdown", "", "short_p99"),
        ("slowdown p99, all sizes", "", "slowdown_p99"),
        ("PFC pauses per ms", "", "pauses_per_ms"),
        ("fabric queue p99", "KB", "fabric_queue_p99_kb"),
        ("throughput", "Gbps", "throughput_gbps"),
        ("flows finished, least bucket up to 10 MB", "", "least_finished"),
    ]
    table = pd.DataFrame(
        [
            ref_row(f"{w}: {q}, {s}", u, v[c][(w, s)], None)
            for w in dict.fromkeys(summary.workload)
            for q, u, c in quantities
            for s in SCHEMES
            if (w, s) in v.index
        ]
    )
    warm, meas = QUICK if quick else FULL
    length = (
        f"Each run is {warm + meas:g} ms of simulated time, the first {warm:g} ms warm-up; slowdown counts flows of the flow-size "
        "workload that started after the warm-up and finished in the run, so the largest flows are under-represented"
        if quick
        else f"The slowdowns count the flows of the flow-size workload that start between {warm:g} ms (the warm-up's end) and "
        f"{warm + meas:g} ms; each run goes on under the same load until they have all finished, at most to {DRAIN_CAP_MS} ms "
        f"(run lengths: {summary.simulated_ms.min():.0f} to {summary.simulated_ms.max():.0f} ms)"
    )
    discussion = (
        f"{length}. The data files give, per bucket, the flows started and the fraction finished (the least, over buckets "
        f"up to 10 MB and runs, {summary.least_finished.min():.0%}). Each incast draws its receiver and 60 senders at random among the 128 hosts. Marking follows the "
        "HPCC simulator per scheme (DCQCN/Mellanox Kmin 400 KB, Kmax 1600 KB, Pmax 0.2 at 100 Gbps, ×4 at 400 Gbps; DCTCP K = "
        "300 KB at 100 Gbps); DCQCN (paper) marks by its own profile (5 KB, 200 KB, 1 %). Message-transport schemes keep no "
        "window of their own. Short-flow tails (p99, worst bucket up to 10 KB): "
        + "; ".join(
            f"{w}: " + ", ".join(f"{s} {v.short_p99[(w, s)]:.1f}" for s in SCHEMES if (w, s) in v.index)
            for w in dict.fromkeys(summary.workload)
        )
        + "."
    )
    return Outcome(
        figure=plot(buckets),
        table=table,
        checks=checks,
        data={"buckets": buckets, "summary": summary},
        discussion=discussion,
    )


register(
    Experiment(
        name="shootout-fabric",
        group="shootout",
        title="Every scheme on one fat-tree: FCT slowdown per flow size (the HPCC paper's Fig. 11 form)",
        paper=(
            "HPCC (SIGCOMM 2019) Fig. 11: on a 320-host fat-tree under WebSearch and FB_Hadoop, HPCC has the lowest tail FCT "
            "slowdown for short flows, and under incast DCQCN's and TIMELY's tails are inflated by PFC pauses."
        ),
        points=points,
        analyse=analyse,
    )
)
