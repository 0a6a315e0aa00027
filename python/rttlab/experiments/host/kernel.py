"""TIMELY, Patched TIMELY, Swift and DCTCP on the kernel and in the simulator: 2, 4 and 8
senders into one receiver at 500 Mbps and 1 Gbps (`--quick`: 2 senders, 500 Mbps), the shipped
``host-*`` scenarios. Each cell runs three ways: on the testbed (`rttlab.host.run`, its
decisions replayed through crates/cc), in the simulator as written, and in the simulator with
the kernel's host model: the testbed's links add no delay of their own, but its hosts do, and
the model gives the simulator the base RTT the kernel measured plus the delay the kernel's RTT
showed beyond its queue (`host_delay`), as link delay (a quarter per link crossing), and the
RTT's spread beyond its queue's as uniform noise on every RTT sample (`nic.rtt_noise`)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from ... import host, presets, run
from ...host.params import bps
from ...plotting import styled, subplots
from ...scenario import set_key
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row

CCS = ["timely", "patched-timely", "swift", "dctcp"]
NAMES = {"timely": "TIMELY", "patched-timely": "Patched TIMELY", "swift": "Swift", "dctcp": "DCTCP"}
SOURCES = ["kernel", "simulator", "simulator + host model"]


def cells(quick: bool) -> list[tuple[str, int, str]]:
    senders, rates = ((2,), ("500Mbps",)) if quick else ((2, 4, 8), ("500Mbps", "1Gbps"))
    return [(cc, n, rate) for cc in CCS for rate in rates for n in senders]


def scenario(cc: str, n: int, rate: str, quick: bool) -> dict[str, Any]:
    s = copy.deepcopy(presets.load(f"host-{cc}"))
    for key, value in {"topology.hosts": n + 1, "flows.0.src": f"1-{n}", "topology.link_rate": rate}.items():
        set_key(s, key, value)
    s["name"] = f"host-{cc}-{n}x-{rate}"
    s["duration"], s["warmup"] = ("600ms", "100ms") if quick else ("1s", "200ms")
    return s


def points(quick: bool) -> list[Point]:
    return [Point({"cc": cc, "senders": n, "rate": rate}, scenario(cc, n, rate, quick)) for cc, n, rate in cells(quick)]


def host_model(k: Any, rate: str) -> tuple[float, float, float]:
    """(base RTT, host delay, noise) in µs from a kernel run: the smallest RTT the connections
    saw; what the median RTT exceeds the median queue at arrival (as time at the link's rate)
    and the base by; and how much wider the RTT spreads than that queue (`rtt_spread_us`)."""
    h = k.meta["host"]
    queue_us = (k.summary["queue_seen_p50_kb"] or 0) * 8e3 / bps(rate) * 1e6
    base = h["base_rtt_us"]["min"]
    return base, max(0.0, k.summary["rtt_p50_us"] - queue_us - base), h["rtt_spread_us"] or 0.0


def row(labels: dict, source: str, r: Any, marked: float | None) -> dict[str, Any]:
    s = r.summary
    # The bottleneck's queue: the switch's port towards host 0 (the kernel's "sw.p0", the
    # simulator's "s0-h0"), sampled over time.
    q = r.queue_stats.iloc[0] if len(r.queue_stats) else None
    return {
        **labels,
        "source": source,
        "goodput_gbps": s["goodput_gbps"],
        "jain": s["jain"],
        "rtt_p50_us": s["rtt_p50_us"],
        "rtt_p99_us": s["rtt_p99_us"],
        "queue_avg_kb": s["queue_avg_kb"],
        "queue_p50_kb": None if q is None else q.p50_kb,
        "queue_p99_kb": s["queue_p99_kb"],
        "marked": marked,
        "retransmits": s["retransmits"],
    }


def sim_marked(r: Any) -> float | None:
    """The fraction of the bottleneck's packets marked (the switch's port towards host 0)."""
    p = r.ports[r.ports.port.astype(str) == "s0-h0"]
    return float(p.ecn_marks.sum() / p.tx_packets.sum()) if len(p) and p.tx_packets.sum() else None


def measure(runs: list[Run], quick: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each cell three ways (rows of `row`), and the differential test of every kernel run."""
    host.build.require()
    rows, diffs = [], []
    for r in runs:
        labels = r.labels
        s = scenario(labels["cc"], labels["senders"], labels["rate"], quick)
        k = host.run(s, decisions=True)
        d = host.replay(k)
        decided = d[d.kernel.notna()]
        diffs.append(
            {
                **labels,
                "decisions": len(decided),
                "exempt": int(decided.exempt.sum()),
                "outside": int((~decided.within & ~decided.exempt).sum()),
                "worst": float((decided.error / decided.bound)[~decided.exempt].max()),
            }
        )
        base, extra, spread = host_model(k, labels["rate"])
        # Uniform noise in [0, x] spreads 0.8·x from its p10 to its p90, and adds x/2 to the
        # median RTT sample, which the links then carry that much less of.
        noise = spread / 0.8
        modelled = copy.deepcopy(s)
        set_key(modelled, "topology.link_delay", f"{round(max(base, base + extra - noise / 2) * 1e6 / 4)}ps")
        set_key(modelled, "nic.rtt_noise", f"{round(noise * 1e6)}ps")
        m = run(modelled)
        rows += [
            {
                **row(labels, "kernel", k, k.summary["marking_fraction"]),
                "base_rtt_us": base,
                "host_delay_us": extra,
                "rtt_noise_us": noise,
                "queue_seen_p50_kb": k.summary["queue_seen_p50_kb"],
            },
            row(labels, "simulator", r.result, sim_marked(r.result)),
            row(labels, "simulator + host model", m, sim_marked(m)),
        ]
    return pd.DataFrame(rows), pd.DataFrame(diffs)


@styled
def plot(d: pd.DataFrame) -> Any:
    first = d[(d.senders == d.senders.min()) & (d.rate == d.rate.iloc[0])]
    fig, axes = subplots(3, width=7.0, height=2.4)
    x = np.arange(len(CCS))
    for ax, (key, label, log) in zip(
        axes,
        [
            ("goodput_gbps", "Goodput (Gbps)", False),
            ("rtt_p50_us", "RTT p50 (µs)", True),
            ("queue_avg_kb", "Queue, mean (KB)", False),
        ],
    ):
        for i, src in enumerate(SOURCES):
            v = first[first.source == src].set_index("cc").reindex(CCS)[key]
            ax.bar(x + (i - 1) * 0.27, v, 0.27, label=src, color=["0.2", "C0", "C1"][i])
        ax.set_xticks(x, [NAMES[c] for c in CCS], rotation=20, fontsize=6)
        ax.set_ylabel(label)
        if log:
            ax.set_yscale("log")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        [
            f"{x}, {int(first.senders.iloc[0])} senders into {first.rate.iloc[0]}" if x == "kernel" else x
            for x in labels
        ],
        loc="outside upper center",
        ncol=3,
        fontsize=6,
        frameon=False,
    )
    return fig


def cell(key: tuple) -> str:
    cc, n, rate = key
    return f"{NAMES[cc]}, {n} senders into {rate}"


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d, diffs = measure(runs, quick)
    key = ["cc", "senders", "rate"]
    wide = d.pivot_table(
        index=key,
        columns="source",
        values=["goodput_gbps", "jain", "rtt_p50_us", "queue_avg_kb", "marked"],
        aggfunc="first",
    )
    good = wide["goodput_gbps"]
    off = (good["simulator + host model"] / good["kernel"] - 1).abs()
    rtt = wide["rtt_p50_us"]
    rtt_off = (rtt["simulator + host model"] / rtt["kernel"] - 1).abs()
    first = (d.senders == d.senders.min()) & (d.rate == d.rate.iloc[0])
    kern = d[first & (d.source == "kernel")].set_index("cc")
    checks = [
        Check(
            f"{NAMES[cc]}: every kernel decision is crates/cc's within the fixed-point bound",
            bool((g.outside == 0).all()),
            f"{int(g.decisions.sum())} decisions, {int(g.outside.sum())} outside, {int(g.exempt.sum())} at a threshold, largest error {g.worst.max():.2f} of its bound",
        )
        for cc, g in diffs.groupby("cc", sort=False)
    ]
    checks += [
        Check(
            "goodput within 15 % of the kernel's in every cell (simulator with the host model)",
            bool((off <= 0.15).all()),
            f"{int((off <= 0.15).sum())} of {len(off)} cells; worst {cell(off.idxmax())}: {off.max():.0%}",
        ),
        Check(
            "Jain's index at least 0.9 on both, in every cell",
            bool((wide["jain"][["kernel", "simulator + host model"]] >= 0.9).all().all()),
            f"lowest: kernel {wide['jain']['kernel'].min():.3f}, simulator {wide['jain']['simulator + host model'].min():.3f}",
        ),
        Check(
            "with the host model, the simulator's median RTT within 25 % of the kernel's in every cell",
            bool((rtt_off <= 0.25).all()),
            f"{int((rtt_off <= 0.25).sum())} of {len(rtt_off)} cells; worst {cell(rtt_off.idxmax())}: {rtt_off.max():.0%}",
        ),
    ]
    dm = wide["marked"].xs("dctcp", level="cc")
    checks.append(
        Check(
            "DCTCP marks within a factor 2 of the kernel's fraction (simulator with the host model)",
            bool(((dm["simulator + host model"] / dm["kernel"]).between(0.5, 2)).all()),
            ", ".join(
                f"{n}×{rate}: {x['simulator + host model']:.3f} vs {x['kernel']:.3f}" for (n, rate), x in dm.iterrows()
            ),
        )
    )
    table_rows = []
    for cc in CCS:
        c = d[first & (d.cc == cc)].set_index("source")
        for src in ("simulator", "simulator + host model"):
            table_rows.append(
                ref_row(f"{NAMES[cc]}: goodput ({src})", "Gbps", c.goodput_gbps[src], c.goodput_gbps["kernel"])
            )
        for src in ("simulator", "simulator + host model"):
            table_rows.append(ref_row(f"{NAMES[cc]}: RTT p50 ({src})", "µs", c.rtt_p50_us[src], c.rtt_p50_us["kernel"]))
        table_rows.append(
            ref_row(
                f"{NAMES[cc]}: RTT p99 (simulator + host model)",
                "µs",
                c.rtt_p99_us["simulator + host model"],
                c.rtt_p99_us["kernel"],
            )
        )
        table_rows.append(
            ref_row(
                f"{NAMES[cc]}: queue, mean (simulator + host model)",
                "KB",
                c.queue_avg_kb["simulator + host model"],
                c.queue_avg_kb["kernel"],
            )
        )
        table_rows.append(
            ref_row(
                f"{NAMES[cc]}: queue, p50 (simulator + host model)",
                "KB",
                c.queue_p50_kb["simulator + host model"],
                c.queue_p50_kb["kernel"],
            )
        )
        table_rows.append(
            ref_row(
                f"{NAMES[cc]}: queue, p99 (simulator + host model)",
                "KB",
                c.queue_p99_kb["simulator + host model"],
                c.queue_p99_kb["kernel"],
            )
        )
        table_rows.append(
            ref_row(
                f"{NAMES[cc]}: Jain's index (simulator + host model)",
                "",
                c.jain["simulator + host model"],
                c.jain["kernel"],
            )
        )
        if cc == "dctcp":
            table_rows.append(
                ref_row(
                    "DCTCP: packets marked (simulator + host model)",
                    "%",
                    100 * c.marked["simulator + host model"],
                    100 * c.marked["kernel"],
                )
            )
        table_rows.append(ref_row(f"{NAMES[cc]}: the kernel's host delay (model)", "µs", None, kern.host_delay_us[cc]))
    n0, r0 = int(d.senders.min()), d.rate.iloc[0]
    discussion = (
        f"At {n0} senders into {r0}, the kernel's goodput is "
        + ", ".join(f"{NAMES[cc]} {kern.goodput_gbps[cc]:.3f}" for cc in CCS)
        + " Gbps; the simulator with the host model gives "
        + ", ".join(f"{good.loc[(cc, n0, r0), 'simulator + host model']:.3f}" for cc in CCS)
        + ". The testbed's links add no delay, but its hosts do: beyond its queue, the kernel's median RTT exceeds the "
        "smallest it saw by "
        + ", ".join(f"{kern.host_delay_us[cc]:.0f} µs ({NAMES[cc]})" for cc in CCS)
        + ". That delay is the kernel's own path under load on this machine (a packet's way through the sender's stack, two "
        "veth pairs, a bridge and a qdisc, and the receiver's stack, on two cores that also run the senders): it grows with "
        "load, and it differs between controllers because their packets come in different bursts (TIMELY's segments are "
        "TSO bursts; DCTCP sends a window at a time; Swift paces and ACKs every packet). Given to the simulator as link "
        "delay it brings the RTT floor and the bytes in flight to the kernel's, and the RTT's spread beyond the queue's, "
        "given as noise on every sample, what TIMELY's gradient answers with swings of its rate (the kernel's RTT p99 is "
        f"{kern.rtt_p99_us['timely'] / kern.rtt_p50_us['timely']:.1f}× its p50 under TIMELY; the model's noise is up to "
        f"{kern.rtt_noise_us['timely']:.0f} µs there). The kernel's DCTCP marks {100 * kern.marked['dctcp']:.1f} % of "
        f"packets where the simulator marks {100 * d[first & (d.source == 'simulator + host model')].set_index('cc').marked['dctcp']:.1f} %: "
        "the testbed's marker decides once per TSO burst, on the queue the burst found, so a burst of up to 64 KB that "
        "arrives below the threshold goes unmarked whole, where the simulator decides packet by packet. Patched TIMELY's "
        "fixed point is set by the RTT error (rtt − rtt_ref)/rtt_ref, which counts any host delay and noise as queue: "
        f"the kernel's queue stands at {kern.queue_avg_kb['patched-timely']:.0f} KB, the model's at "
        f"{d[first & (d.source == 'simulator + host model')].set_index('cc').queue_avg_kb['patched-timely']:.0f} KB. Every decision the kernel "
        "programs took is crates/cc's from the same state, within the fixed-point bound (docs/host.md), so where the two "
        "differ it is the inputs (RTT samples, ACK timing), not the algorithms."
    )
    return Outcome(
        figure=plot(d),
        table=pd.DataFrame(table_rows),
        checks=checks,
        data={"cells": d, "differential": diffs},
        discussion=discussion,
    )


register(
    Experiment(
        name="host",
        group="host",
        title="The simulator beside the kernel: TIMELY, Patched TIMELY, Swift and DCTCP as Linux TCP",
        paper=(
            "the same scenarios run on this machine's Linux kernel (rttlab host run): the controllers as BPF "
            "struct_ops congestion control, two to eight senders into one receiver through a network-namespace "
            "switch (tbf at the link rate, the switch's buffer, ECN by a tc marker), real TCP connections; "
            "measured numbers, not published ones."
        ),
        points=points,
        analyse=analyse,
        reference="kernel",
    )
)
