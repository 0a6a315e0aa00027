"""The DCTCP paper's analysis of the queue (§3.3): N synchronised long flows through one 10 Gbps
port marking at K make the queue oscillate around K with its peak near K + N, and mark a
fraction of packets of the order of √(2/W*), W* = (C·RTT + K)/N the window at the peak."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row

PACKET = 1500
K = 65
FLOWS = [2, 4, 8, 16]
#: Unloaded RTT: 1500 B and 64 B each over two 10 Gbps hops, four 10 µs propagations.
BASE_RTT = 2 * (1.2e-6 + 0.0512e-6) + 40e-6
BDP = 10e9 * BASE_RTT / 8 / PACKET


def scenario(n: int, seed: int, quick: bool) -> dict[str, Any]:
    return {
        "name": f"dctcp-queue-{n}",
        "seed": seed,
        "duration": "40ms" if quick else "120ms",
        "warmup": "20ms",
        "topology": {"kind": "star", "hosts": n + 1, "link_rate": "10Gbps", "link_delay": "10us"},
        "switch": {"pfc": False, "ecn": {"k": f"{K * PACKET}B", "mark_at": "enqueue"}},
        "transport": {"kind": "window", "delayed_ack": False},
        "cc": {"algorithm": "dctcp"},
        "flows": [{"src": f"1-{n}", "dst": 0}],
        "measure": {"queue_interval": "100ns"},
    }


def points(quick: bool) -> list[Point]:
    return [Point({"flows": n, "seed": 1}, scenario(n, 1, quick)) for n in FLOWS]


def measured(runs: list[Run]) -> pd.DataFrame:
    rows = []
    for r in runs:
        s, n = r.result.summary, r.labels["flows"]
        packets = s["throughput_gbps"] * 1e9 * s["measured_s"] / 8 / PACKET
        w = (BDP + K) / n
        rows.append(
            {
                "flows": n,
                "queue_avg_pkts": s["queue_avg_kb"] * 1e3 / PACKET,
                "queue_max_pkts": s["queue_max_kb"] * 1e3 / PACKET,
                "marked": s["ecn_marks"] / packets,
                "sqrt_1_over_w": math.sqrt(1 / w),
                "sqrt_2_over_w": math.sqrt(2 / w),
                "throughput_gbps": s["throughput_gbps"],
            }
        )
    return pd.DataFrame(rows)


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, (a, b) = subplots(2, width=6.5, height=2.4)
    a.plot(d.flows, d.queue_max_pkts, marker="o", label="queue peak")
    a.plot(d.flows, d.queue_avg_pkts, marker="s", label="queue mean")
    a.plot(d.flows, K + d.flows, linestyle="--", color="black", linewidth=0.8, label="K + N (analysis)")
    a.axhline(K, color="0.5", linestyle=":", linewidth=0.8, label="K")
    a.set(xlabel="Flows N", ylabel="Queue (packets)")
    b.fill_between(d.flows, d.sqrt_1_over_w, d.sqrt_2_over_w, color="0.85", label="√(1/W*) to √(2/W*)")
    b.plot(d.flows, d.marked, marker="o", label="marked fraction")
    b.set(xlabel="Flows N", ylabel="Packets marked")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(FLOWS, [str(n) for n in FLOWS])
        ax.legend(fontsize=6)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs)
    v = d.set_index("flows")
    checks = [
        Check(
            "the queue peaks near K + N (within [K, K + N + 3] packets)",
            bool(((v.queue_max_pkts >= K) & (v.queue_max_pkts <= K + v.index + 3)).all()),
            ", ".join(f"N={n}: {v.queue_max_pkts[n]:.0f} vs {K + n}" for n in FLOWS),
        ),
        Check(
            "the marked fraction is of the order of √(2/W*) (between √(1/W*) and √(2/W*), ±15 %)",
            bool(((v.marked > 0.85 * v.sqrt_1_over_w) & (v.marked < 1.15 * v.sqrt_2_over_w)).all()),
            ", ".join(
                f"N={n}: {v.marked[n]:.3f} in [{v.sqrt_1_over_w[n]:.3f}, {v.sqrt_2_over_w[n]:.3f}]" for n in FLOWS
            ),
        ),
        Check(
            "the link stays full",
            bool((v.throughput_gbps > 9.9).all()),
            ", ".join(f"{x:.2f}" for x in v.throughput_gbps) + " Gbps",
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"N = {n}: queue peak (analysis: K + N)", "packets", v.queue_max_pkts[n], K + n) for n in FLOWS]
        + [ref_row(f"N = {n}: marked fraction (analysis: √(2/W*))", "", v.marked[n], v.sqrt_2_over_w[n]) for n in FLOWS]
    )
    discussion = (
        f"With K = {K} packets and C·RTT = {BDP:.1f} packets, the queue peaks at "
        + ", ".join(f"{v.queue_max_pkts[n]:.0f}" for n in FLOWS)
        + f" packets for N = {', '.join(map(str, FLOWS))} (K + N: {', '.join(str(K + n) for n in FLOWS)}). "
        "The analysis assumes α constant over a sawtooth; with g = 1/16 it decays between marking "
        "episodes, so the first cut may be too small to end the episode and a second follows a "
        "window later, which puts the marked fraction between √(1/W*) and √(2/W*). Synchronisation "
        "weakens as N grows, and the peak stays below K + N."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"queue": d}, discussion=discussion)


register(
    Experiment(
        name="dctcp-queue",
        group="dctcp",
        title="DCTCP §3.3: the queue under N long flows (K + N, marked fraction)",
        paper=(
            "The DCTCP paper's analysis (§3.3): with N synchronised flows the queue peaks at "
            "Q_max = K + N packets, oscillates with amplitude about ½·√(2N(C·RTT + K)), and the "
            "fraction of marked packets is α ≈ √(2/W*)."
        ),
        points=points,
        analyse=analyse,
    )
)
