"""CS244'16 (Fang, Orbay): TIMELY with two settings, an "oracle" TIMELY fed the true queue
occupancy instead of the RTT, and TCP Vegas, 10 senders → 1 on an 11-host star at 50 Mbps (what
their ns-3 could run), and again at 10 Gbps."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import Check, Experiment, Outcome, Point, Run, register
from ...plotting import styled, subplots
from ..common import ref_row
from .common import cdf_quantile, trace_quantile

PACKET = 1500
#: Their table: (throughput Mbps, queue mean, queue p95 (packets), RTT mean, RTT p95 (µs)).
PUBLISHED = {
    "TIMELY δ=2 β=0.3": (25.4915, 0, 1, 868, 1371),
    "TIMELY δ=4 β=0.01": (29.0381, 2, 7, 1411, 2568),
    "oracle": (32.9797, 58, 133, 43368, 89295),
    "Vegas": (31.4018, 29, 72, 12179, 14903),
}
SPEEDS = {"50Mbps": 50e6, "10Gbps": 10e9}


def cc(scheme: str, rate: float) -> dict[str, Any]:
    """Their δ is read as Mbps on 50 Mbps links and kept as a fraction of the link at 10 Gbps;
    α = 0.1 and T_low/T_high = 50/500 µs are theirs; the gradient is normalised by the unloaded
    RTT (540 µs at 50 Mbps, 43 µs at 10 Gbps) and the floor is 1/1000 of the link."""
    if scheme == "Vegas":
        return {"algorithm": "vegas"}
    delta, beta = (2, 0.3) if scheme.startswith("TIMELY δ=2") else (4, 0.01)
    return {
        "algorithm": "timely",
        "alpha": 0.1,
        "beta": beta,
        "delta": f"{delta * rate / 50e6:g}Mbps",
        "t_low": "50us",
        "t_high": "500us",
        "min_rtt": "540us" if rate < 1e9 else "43us",
        "min_rate": f"{rate / 1e3 / 1e6:g}Mbps",
        "signal": "oracle" if scheme == "oracle" else "rtt",
    }


def scenario(scheme: str, speed: str, quick: bool) -> dict[str, Any]:
    rate = SPEEDS[speed]
    slow = rate < 1e9
    dur, warm = ((600, 200) if quick else (3000, 1000)) if slow else ((15, 5) if quick else (60, 20))
    window = scheme == "Vegas"
    return {
        "name": f"cs244-star-{scheme}-{speed}".replace(" ", "_").replace("=", "").replace("δ", "d").replace("β", "b"),
        "seed": 1,
        "duration": f"{dur}ms",
        "warmup": f"{warm}ms",
        "topology": {"kind": "star", "hosts": 11, "link_rate": speed, "link_delay": "10us"},
        # TIMELY runs on a lossless (PFC) fabric, as in the TIMELY paper; Vegas, a TCP, on drop
        # tail at their ns-3 queue size.
        "switch": {"pfc": False, "queue_limit": "500KB"} if window else {"pfc": True},
        "nic": {"mtu": f"{PACKET}B", "header": "64B"} | ({} if window else {"segment": "1436B", "max_outstanding": "64KB"}),
        "transport": {"kind": "window"} if window else {"kind": "message"},
        "cc": cc(scheme, rate),
        "flows": [{"src": "1-10", "dst": 0}],
        "measure": {"queue_ports": ["s0-h0"], "queue_interval": "100us" if slow else "1us", "queue_trace": True},
    }


def points(quick: bool) -> list[Point]:
    return [Point({"scheme": s, "speed": sp}, scenario(s, sp, quick)) for sp in SPEEDS for s in PUBLISHED]


def measured(runs: list[Run]) -> pd.DataFrame:
    rows = []
    for r in runs:
        s, q = r.result.summary, r.result.tables["queues"]
        # The trace starts at 0; only the measured period (the run's last `measured_s`) counts,
        # as in the summary's numbers.
        q = q[q.time_us > q.time_us.max() - s["measured_s"] * 1e6]
        rows.append(
            {
                **r.labels,
                "throughput_mbps": s["goodput_gbps"] * 1e3 / 10,
                "queue_mean_pkts": q.bytes.mean() / PACKET,
                "queue_p95_pkts": trace_quantile(q, "s0-h0", 0.95) / PACKET,
                "rtt_mean_us": s["rtt_avg_us"],
                "rtt_p95_us": cdf_quantile(r.result.tables["rtt"], 0.95),
            }
        )
    return pd.DataFrame(rows)


@styled
def plot(d: pd.DataFrame) -> Any:
    fig, ax = subplots(3, width=7.0, height=2.4)
    schemes = list(PUBLISHED)
    for k, (speed, g) in enumerate(d.groupby("speed", sort=False)):
        g = g.set_index("scheme").reindex(schemes)
        x = [i + 0.4 * k for i in range(len(schemes))]
        ax[0].bar(x, g.throughput_mbps / (SPEEDS[speed] / 1e6 / 10), 0.4, label=speed)
        ax[1].bar(x, g.queue_mean_pkts, 0.4, label=speed)
        ax[2].bar(x, g.rtt_mean_us, 0.4, label=speed)
    for a, label in zip(ax, ["Throughput / fair share", "Queue mean (packets)", "RTT mean (µs)"]):
        a.set_xticks([i + 0.2 for i in range(len(schemes))], [s.replace("TIMELY ", "T ") for s in schemes], fontsize=5, rotation=20)
        a.set(ylabel=label)
        a.legend(fontsize=6)
    ax[2].set_yscale("log")
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    d = measured(runs)
    v = d.set_index(["speed", "scheme"])
    checks = []
    for speed in SPEEDS:
        t = v.loc[speed]
        checks.append(Check(f"{speed}: TIMELY keeps the queue and RTT below Vegas (both settings)", bool((t.queue_mean_pkts[["TIMELY δ=2 β=0.3", "TIMELY δ=4 β=0.01"]] < t.queue_mean_pkts["Vegas"]).all() and (t.rtt_mean_us[["TIMELY δ=2 β=0.3", "TIMELY δ=4 β=0.01"]] < t.rtt_mean_us["Vegas"]).all()), "queue " + ", ".join(f"{s} {t.queue_mean_pkts[s]:.1f}" for s in PUBLISHED) + " packets"))
        checks.append(Check(f"{speed}: δ=2 β=0.3 gets less throughput and less queue than δ=4 β=0.01", bool(t.throughput_mbps["TIMELY δ=2 β=0.3"] <= t.throughput_mbps["TIMELY δ=4 β=0.01"] and t.queue_mean_pkts["TIMELY δ=2 β=0.3"] <= t.queue_mean_pkts["TIMELY δ=4 β=0.01"]), f"{t.throughput_mbps['TIMELY δ=2 β=0.3']:.2f} vs {t.throughput_mbps['TIMELY δ=4 β=0.01']:.2f} Mbps per flow"))
        checks.append(Check(f"{speed}: the oracle (true queues, same parameters) does at least as well as TIMELY δ=4 β=0.01 (their hypothesis; their run contradicted it)", bool(t.throughput_mbps["oracle"] >= 0.95 * t.throughput_mbps["TIMELY δ=4 β=0.01"] and t.rtt_mean_us["oracle"] <= 1.05 * t.rtt_mean_us["TIMELY δ=4 β=0.01"]), f"oracle {t.throughput_mbps['oracle']:.2f} Mbps at {t.rtt_mean_us['oracle']:.0f} µs; TIMELY {t.throughput_mbps['TIMELY δ=4 β=0.01']:.2f} Mbps at {t.rtt_mean_us['TIMELY δ=4 β=0.01']:.0f} µs"))
    t = v.loc["50Mbps"]
    table = pd.DataFrame(
        [ref_row(f"50 Mbps, {s}: {q}", u, t[c][s], PUBLISHED[s][k]) for s in PUBLISHED for k, (q, u, c) in enumerate([("throughput per flow", "Mbps", "throughput_mbps"), ("queue mean", "packets", "queue_mean_pkts"), ("queue p95", "packets", "queue_p95_pkts"), ("RTT mean", "µs", "rtt_mean_us"), ("RTT p95", "µs", "rtt_p95_us")])]
    )
    discussion = (
        "Their numbers are ns-3 TCP with TIMELY's rate turned into a window, and their own discussion puts the gap to the "
        "paper on that; only orderings are compared. rttlab paces TIMELY's rate on the message transport (one-packet "
        "segments) and runs Vegas on the window transport; the oracle is TIMELY with the same parameters whose gradient "
        "runs on the unloaded RTT plus the path's true queues at each completion (`cc.signal = \"oracle\"`). At 50 Mbps: "
        + "; ".join(f"{s} {t.throughput_mbps[s]:.1f} Mbps, queue {t.queue_mean_pkts[s]:.1f} pkts, RTT {t.rtt_mean_us[s]:.0f} µs" for s in PUBLISHED)
        + ". Each 10 Gbps run takes rttlab well under a second; CS244'16's ns-3 could not finish one."
    )
    return Outcome(figure=plot(d), table=table, checks=checks, data={"star": d}, discussion=discussion)


register(
    Experiment(
        name="cs244-star",
        group="cs244",
        title="CS244'16: TIMELY, oracle TIMELY and Vegas on the 11-host star at 50 Mbps and 10 Gbps",
        paper=(
            "CS244'16 ran 10 senders into one receiver through one switch at 50 Mbps in ns-3: TIMELY (δ = 2, β = 0.3 and "
            "δ = 4, β = 0.01) kept queue and RTT far below Vegas; their oracle TIMELY fed the true queue did not work as "
            "they hoped; 10 Gbps did not finish in ns-3."
        ),
        points=points,
        analyse=analyse,
    )
)
