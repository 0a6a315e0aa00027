"""TIMELY Fig. 21 (§6.2): median and 99th-percentile RPC latency against offered load, TIMELY
against PFC alone (the runs of Fig. 19), under the default reading of the workload and PFC over
TIMELY under every reading; and where the queue went: how often TIMELY's rate was below line
rate when a segment left, and the bytes waiting in the hosts ("queuing moved from the shared
network to the end-host", §6.2). Latency runs from the request's issue at the client to the
response's last byte, so it includes the time an RPC waits in its host for the paced rate."""

from __future__ import annotations

from typing import Any

import pandas as pd

from .. import Check, Experiment, Outcome, Run, register
from ..common import ref_row
from .clos import DEFAULT, by_load, clos_plan, load_points, per_reading, ratios, verdicts
from .fig20 import latency_plot, lower_checks


def p99_gain_then_less(d: pd.DataFrame) -> tuple[bool, str]:
    """TIMELY lowers the p99 RPC latency up to 0.5 load (by > 5 %), less at the largest load
    (one reading's rows of `by_load`)."""
    r = ratios(d, ["rpc_p99_us"]).rpc_p99_us
    below, hi = r[r.index <= 0.5].max(), r.index.max()
    return bool(below > 1.05 and r[hi] < below), f"(best up to 0.5: {below:.2f}×, at {hi:.1f}: {r[hi]:.2f}×)"


def host_side(readings: pd.DataFrame) -> Any:
    """For `latency_plot`: TIMELY's segments released below line rate, and the bytes waiting
    in the hosts, under every reading."""

    def draw(a: Any, b: Any) -> None:
        per_reading(
            a,
            readings,
            lambda v: 100 * v.below_line_rate,
            "Segments sent below line rate (%)",
            "TIMELY's rate below line rate",
        )
        per_reading(
            b,
            readings,
            lambda v: v.host_queue_kb,
            "Bytes waiting per host (KB)",
            "Host-side queue (TIMELY solid, PFC dashed)",
            logy=True,
            systems=("TIMELY", "PFC"),
        )

    return draw


def analyse(runs: list[Run], quick: bool) -> Outcome:
    readings = by_load(runs, ["reading", "system", "load"])
    d = readings[readings.reading == DEFAULT].drop(columns="reading")
    r = ratios(d, ["rpc_p50_us", "rpc_p99_us"])
    hi = max(clos_plan(quick).loads)
    checks, held = lower_checks(readings, {"rpc_p50_us": "median RPC latency"})
    ok, text, p99_under = verdicts(readings, p99_gain_then_less)
    checks.append(
        Check(
            f"TIMELY lowers the p99 RPC latency up to 0.5 load (by > 5 %), less beyond saturation (reading {DEFAULT}; every reading listed, PFC / TIMELY)",
            ok,
            text,
        )
    )
    v = d.set_index(["system", "load"])
    top = readings[readings.reading != DEFAULT].load.max()
    ro = readings.set_index(["reading", "system", "load"])
    table = pd.DataFrame(
        [ref_row(f"PFC / TIMELY median RPC latency, best over loads, reading {DEFAULT}", "×", r.rpc_p50_us.max(), 2.0)]
        + [
            ref_row(
                f"PFC / TIMELY median RPC latency, best over loads, reading {m}",
                "×",
                ratios(x, ["rpc_p50_us"]).rpc_p50_us.max(),
                2.0,
            )
            for m, x in readings.groupby("reading", sort=False)
            if m != DEFAULT
        ]
        + [
            ref_row(f"{s}: {q} RPC latency at {load:.1f} load", "µs", v[f"rpc_{q}_us"][s][load], None)
            for s in ("TIMELY", "PFC")
            for load in (0.5, hi)
            if load in v.index.levels[1]
            for q in ("p50", "p99")
        ]
        + [
            ref_row(
                f"{s}: RPCs open at the end at {load:.1f} load (counted at their age)",
                "",
                v.rpcs_censored[s][load],
                None,
            )
            for s in ("TIMELY", "PFC")
            for load in (0.5, hi)
            if load in v.index.levels[1]
        ]
        + [
            ref_row(f"TIMELY at {top:.1f} load, reading {m}: {what}", unit, scale * ro[key][m]["TIMELY"][top], None)
            for m in readings.reading.unique()
            for key, what, unit, scale in (
                ("below_line_rate", "segments sent below line rate", "%", 100),
                ("rate_wait_us", "mean wait of a segment for the rate", "µs", 1),
                ("host_queue_kb", "bytes waiting per host", "KB", 1),
            )
        ]
        + [
            ref_row(
                f"PFC at {top:.1f} load, reading {m}: bytes waiting per host",
                "KB",
                ro.host_queue_kb[m]["PFC"][top],
                None,
            )
            for m in readings.reading.unique()
        ]
    )
    w = {
        m: (ro.rate_wait_us[m]["TIMELY"][top], ro.host_queue_kb[m]["TIMELY"][top], ro.host_queue_kb[m]["PFC"][top])
        for m in readings.reading.unique()
    }
    discussion = (
        f"{held} The p99 gain up to 0.5 load holds under {', '.join(p99_under) if p99_under else 'no reading'}. "
        f"Where the queue went, at {top:.1f} load (TIMELY: mean wait of a segment for its rate; bytes waiting per host, TIMELY vs PFC): "
        + "; ".join(f"{m}: {a:.1f} µs, {b:.0f} vs {c:.0f} KB" for m, (a, b, c) in w.items())
        + ". With a persistent connection per client–server pair TIMELY's rate binds and the hosts hold the queue the "
        "fabric no longer does, as §6.2 says of the paper's testbed; with each RPC's server drawn anew a connection "
        "sends one 64 KB segment after an idle gap, which leaves at once whatever the rate, and TIMELY equals PFC. "
        f"Under reading {DEFAULT}, median RPC latency PFC / TIMELY: {', '.join(f'{x:.2f}× at {load:.1f}' for load, x in r.rpc_p50_us.items())}; "
        f"p99: {', '.join(f'{x:.2f}×' for x in r.rpc_p99_us)}. RPCs still open when a run ends count at "
        f"their age, a lower bound (right-censored): at {hi:.1f} load {v.rpcs_censored['TIMELY'][hi]:.0f} (TIMELY) and "
        f"{v.rpcs_censored['PFC'][hi]:.0f} (PFC) per run."
    )
    fig = latency_plot(
        readings,
        {"rpc_p50_us": "Median", "rpc_p99_us": "99th-percentile"},
        "RPC latency (µs)",
        more=host_side(readings),
    )
    return Outcome(figure=fig, table=table, checks=checks, data={"summary": readings}, discussion=discussion)


register(
    Experiment(
        name="timely-fig21",
        group="timely",
        title="Fig. 21: RPC latency against load (Clos)",
        paper=(
            "The lower RTTs give a median RPC latency about 2× lower; queueing moves from the fabric into the "
            "hosts, so the p99 RPC latency benefit diminishes as the offered load passes saturation."
        ),
        points=load_points,
        analyse=analyse,
    )
)
