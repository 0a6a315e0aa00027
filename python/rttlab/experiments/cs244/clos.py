"""CS244'19 §3.3, Figs. 8–9: 192 hosts on a 3-level Clos, random pairs, flows of 50, 500 and 1500
packets: RTT CDF, total throughput and FCT per size when TIMELY's gradient runs on SUM, MAX or
SUM_SQU of the hop-by-hop queue vector."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ...plotting import styled, subplots
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import ref_row
from .common import SIGNALS

PODS, EDGES, HOSTS_PER_EDGE, AGGS, CORES_PER_AGG = 4, 4, 12, 4, 4
PAYLOAD = 1436
SIZES = {"short (50 pkts)": 50 * PAYLOAD, "mid (500 pkts)": 500 * PAYLOAD, "long (1500 pkts)": 1500 * PAYLOAD}
LOAD = 0.4


def topology() -> dict[str, Any]:
    """4 pods of 4 edge switches (12 hosts each, 3:1 oversubscribed) and 4 aggregation switches,
    each aggregation switch up to 4 of 16 cores; every link 10 Gbps, 1 µs (CS244'19 Fig. 8 gives
    192 hosts and three levels, not the wiring)."""
    edges, aggs, cores = PODS * EDGES, PODS * AGGS, AGGS * CORES_PER_AGG
    links = [
        {"a": f"h[{HOSTS_PER_EDGE * e}-{HOSTS_PER_EDGE * e + HOSTS_PER_EDGE - 1}]", "b": f"e{e}"} for e in range(edges)
    ]
    links += [
        {"a": f"e{p * EDGES + e}", "b": f"a{p * AGGS + a}"}
        for p in range(PODS)
        for e in range(EDGES)
        for a in range(AGGS)
    ]
    links += [
        {"a": f"a{p * AGGS + a}", "b": f"c{a * CORES_PER_AGG + c}"}
        for p in range(PODS)
        for a in range(AGGS)
        for c in range(CORES_PER_AGG)
    ]
    return {
        "kind": "graph",
        "hosts": [f"h[0-{edges * HOSTS_PER_EDGE - 1}]"],
        "switches": [f"e[0-{edges - 1}]", f"a[0-{aggs - 1}]", f"c[0-{cores - 1}]"],
        "link_rate": "10Gbps",
        "link_delay": "1us",
        "links": links,
    }


def scenario(signal: str, quick: bool) -> dict[str, Any]:
    third = 100 / 3
    cdf = [[0, 0]] + [pt for k, s in enumerate(SIZES.values()) for pt in ([s, third * k], [s, third * (k + 1)])]
    return {
        "name": f"cs244-clos-{signal}",
        "seed": 1,
        "duration": "8ms" if quick else "40ms",
        "warmup": "2ms" if quick else "5ms",
        "topology": topology(),
        "nic": {"mtu": "1500B", "header": "64B", "segment": "16KB", "max_outstanding": "64KB"},
        "cc": {"algorithm": "timely", "signal": signal},
        "workloads": [{"kind": "flow_sizes", "cdf": cdf, "load": LOAD}],
        "measure": {"fct_buckets": [f"{s}B" for s in SIZES.values()]},
    }


def points(quick: bool) -> list[Point]:
    return [Point({"signal": label}, scenario(sig, quick)) for sig, label in SIGNALS.items()]


@styled
def plot(cdfs: pd.DataFrame, fct: pd.DataFrame) -> Any:
    fig, ax = subplots(2, width=7.0, height=2.6)
    for sig, d in cdfs.groupby("signal", sort=False):
        ax[0].plot(d.rtt_us, d.cdf, label=sig)
    ax[0].set(xlabel="RTT (µs)", ylabel="CDF", xscale="log", title="RTT of every completion")
    width = 0.25
    sizes = list(SIZES)
    for k, (sig, d) in enumerate(fct.groupby("signal", sort=False)):
        d = d.set_index("size").reindex(sizes)
        ax[1].bar([i + k * width for i in range(len(sizes))], d.fct_p50_us / 1e3, width, label=sig)
    ax[1].set_xticks([i + width for i in range(len(sizes))], sizes, fontsize=6)
    ax[1].set(ylabel="Median FCT (ms)", yscale="log", title="Flow completion time")
    for a in ax:
        a.legend(fontsize=6)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    rows, cdfs, fcts = [], [], []
    for r in runs:
        sig, s = r.labels["signal"], r.result.summary
        rows.append(
            {
                "signal": sig,
                "throughput_gbps": s["throughput_gbps"],
                "rtt_p50_us": s["rtt_p50_us"],
                "rtt_p99_us": s["rtt_p99_us"],
                "flows_finished": s["flows_finished"],
            }
        )
        cdfs.append(r.result.tables["rtt"].assign(signal=sig))
        f = r.result.tables["fct"]
        by_bytes = {b: n for n, b in SIZES.items()}
        f = f[(f.flows > 0) & f.size_max_bytes.isin(list(by_bytes))].copy()
        f["size"] = [by_bytes[int(b)] for b in f.size_max_bytes]
        fcts.append(f.assign(signal=sig))
    d = pd.DataFrame(rows).set_index("signal")
    fct = pd.concat(fcts, ignore_index=True)
    cdf = pd.concat(cdfs, ignore_index=True)
    med = fct.pivot_table(index="signal", columns="size", values="fct_p50_us")
    mean_fct = med.mean(axis=1)
    checks = [
        Check(
            "SUM has the lowest RTT (median)",
            bool(d.rtt_p50_us["SUM"] <= d.rtt_p50_us.min()),
            ", ".join(f"{s} {d.rtt_p50_us[s]:.0f} µs" for s in d.index),
        ),
        Check(
            "SUM has lower total throughput than MAX and SUM_SQU",
            bool(d.throughput_gbps["SUM"] < d.throughput_gbps[["MAX", "SUM_SQU"]].min()),
            ", ".join(f"{s} {d.throughput_gbps[s]:.1f} Gbps" for s in d.index),
        ),
        Check(
            "MAX gives the shortest flow completion times (mean of the sizes' medians)",
            bool(mean_fct.idxmin() == "MAX"),
            ", ".join(f"{s} {mean_fct[s] / 1e3:.2f} ms" for s in mean_fct.index),
        ),
    ]
    table = pd.DataFrame(
        [ref_row(f"{s}: total throughput", "Gbps", d.throughput_gbps[s], None) for s in d.index]
        + [ref_row(f"{s}: median RTT", "µs", d.rtt_p50_us[s], None) for s in d.index]
        + [ref_row(f"{s}: median FCT, {size}", "µs", med.loc[s, size], None) for s in med.index for size in med.columns]
    )
    discussion = (
        f"192 hosts, each starting flows to random peers at {LOAD:.0%} of its link (Poisson, sizes 50/500/1500 packets equally "
        "likely; CS244'19 started FTP flows in random intervals and gives neither load nor wiring). Total throughput "
        + ", ".join(f"{s} {d.throughput_gbps[s]:.1f} Gbps" for s in d.index)
        + "; median RTT "
        + ", ".join(f"{s} {d.rtt_p50_us[s]:.0f} µs" for s in d.index)
        + "; mean of the median FCTs "
        + ", ".join(f"{s} {mean_fct[s] / 1e3:.2f} ms" for s in mean_fct.index)
        + ". The report's numbers are not published, so only the orderings are compared."
    )
    return Outcome(
        figure=plot(cdf, fct),
        table=table,
        checks=checks,
        data={"per_signal": d.reset_index(), "rtt_cdf": cdf, "fct": fct},
        discussion=discussion,
    )


register(
    Experiment(
        name="cs244-clos",
        group="cs244",
        title="CS244'19 §3.3 Fig. 9: 192 hosts on a 3-level Clos, SUM, MAX, SUM_SQU",
        paper="On a 192-host Clos with random pairs, SUM has the lowest RTT but lower total throughput than MAX and SUM_SQU, and MAX gives the shortest FCTs.",
        points=points,
        analyse=analyse,
    )
)
