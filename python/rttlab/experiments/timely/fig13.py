"""TIMELY Fig. 13 (§6.1): RTT and throughput of four sample connections over time, mean ± SD
in the legend, and Jain's fairness index over all 40 connections, TIMELY against PFC: over the
whole run, and the mean over 1 ms windows (the paper does not say over how long it measured).

What decides the index is the server's "2x10G link": the presets bond two 10 Gbps ports and hash
each connection onto one, so the ports' shares differ with the draw, and under PFC a client
paused for the busier port stalls its connections to the other as well (head-of-line blocking).
The sensitivity panel runs more seeds (more draws) and the one 20 Gbps link beside them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...plotting import PALETTE, styled, subplots
from ...published import TIMELY_JAIN
from .. import Check, Experiment, Outcome, Point, Run, register
from ..common import (
    ONE_LINK,
    Plan,
    connection_series,
    connection_stats,
    grid_points,
    interval_throughput,
    over_seeds,
    ref_row,
    sample_flows,
    summaries,
)
from .testbed import plan, run_plan

FAIR_SHARE_MBPS = 500
WINDOW_MS = 100  # time shown in the plot
SYSTEMS = {"TIMELY": "timely-testbed.toml", "PFC": "timely-testbed-pfc.toml"}
BOND = "two bonded 10 Gbps ports (presets)"
ONE = "one 20 Gbps link"


def sensitivity_plan(quick: bool) -> Plan:
    """More hash draws, shorter: the presets' warm-up, 300 ms measured, seeds 1–10 (1–4 quick)."""
    p = plan(quick)
    return Plan(p.warmup_ms, 300, tuple(range(1, 5 if quick else 11)))


def points(quick: bool) -> list[Point]:
    p, sp = run_plan(quick), sensitivity_plan(quick)
    main = [grid_points("timely-fig13", [({"system": s}, {})], p, file=f, timeseries="1ms") for s, f in SYSTEMS.items()]
    bond = [grid_points("timely-fig13", [({"system": s, "server": BOND}, {})], sp, file=f) for s, f in SYSTEMS.items()]
    one = [
        grid_points(
            "timely-fig13",
            [({"system": s, "server": ONE}, ONE_LINK)],
            Plan(sp.warmup_ms, sp.measured_ms, sp.seeds[:1]),
            file=f,
        )
        for s, f in SYSTEMS.items()
    ]
    return [x for group in main + bond + one for x in group]


def window_jain(run: Run, after_ms: float) -> float:
    """Jain's index over the connections' throughput in each 1 ms window after ``after_ms``,
    averaged over the windows."""
    t = interval_throughput(run.result.timeseries)
    x = t[t.time_ms > after_ms].pivot(index="time_ms", columns="flow", values="throughput_gbps").to_numpy()
    return float(np.mean(x.sum(1) ** 2 / (x.shape[1] * (x**2).sum(1))))


@styled
def plot(d: pd.DataFrame, stats: pd.DataFrame, t0: float, draws: pd.DataFrame) -> Any:
    fig, (a, b, c) = subplots(1, 3, width=6.5, height=6.2)
    for f, x in d[d.time_ms <= t0 + WINDOW_MS].groupby("flow"):
        s = stats.loc[f]
        a.plot(x.time_ms, x.rtt_us, linewidth=0.8, label=f"conn. {f}: {s.rtt_mean:.0f} ± {s.rtt_sd:.0f} µs")
        b.plot(
            x.time_ms,
            x.throughput_gbps * 1e3,
            linewidth=0.8,
            label=f"conn. {f}: {s.thr_mean:.0f} ± {s.thr_sd:.0f} Mbps",
        )
    b.axhline(FAIR_SHARE_MBPS, color="black", linestyle=":", linewidth=0.8)
    a.set(ylabel="RTT, 1 ms mean (µs)")
    b.set(ylabel="Throughput, 5 ms (Mbps)", xlabel="Time (ms)")
    a.legend(ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=6)
    b.legend(ncols=2, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=6)
    for (system, x), color in zip(draws.groupby("system", sort=False), PALETTE):
        c.plot(x.seed, x.jain, "o", color=color, label=f"{system} (paper {TIMELY_JAIN[system]})")
        c.axhline(TIMELY_JAIN[system], color=color, linestyle=":", linewidth=0.8)
    c.set(xlabel="Seed (a draw of the bond's hash)", ylabel="Jain's index", xticks=sorted(draws.seed.unique()))
    c.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=6)
    return fig


def analyse(runs: list[Run], quick: bool) -> Outcome:
    p = run_plan(quick)
    main = [r for r in runs if "server" not in r.labels]
    first = [r for r in main if r.labels["system"] == "TIMELY" and r.labels["seed"] == p.seeds[0]]
    shown = sample_flows(len(first[0].result.flows), 4, seed=13)
    d = connection_series(first, "system", p.warmup_ms, shown, samples=5)
    stats = connection_stats(d, ["flow"])
    jain = over_seeds(summaries(main), ["system"]).set_index("system").jain
    per_ms = {s: np.mean([window_jain(r, p.warmup_ms) for r in main if r.labels["system"] == s]) for s in jain.index}
    sens = summaries([r for r in runs if "server" in r.labels])
    draws = sens[sens.server == BOND].pivot(index="seed", columns="system", values="jain")
    one = sens[sens.server == ONE].set_index("system").jain
    fairer = int((draws.TIMELY > draws.PFC).sum())
    checks = [
        Check(
            "the sampled connections run close to the 500 Mbps fair share (means within ±20 %)",
            bool(((stats.thr_mean - FAIR_SHARE_MBPS).abs() <= 0.2 * FAIR_SHARE_MBPS).all()),
            ", ".join(f"{m:.0f}" for m in stats.thr_mean) + " Mbps",
        ),
        Check("TIMELY is fair (Jain ≥ 0.95)", jain["TIMELY"] >= 0.95, f"Jain {jain['TIMELY']:.3f}"),
        Check(
            "TIMELY is fairer than PFC", jain["TIMELY"] > jain["PFC"], f"Jain {jain['TIMELY']:.3f} vs {jain['PFC']:.3f}"
        ),
    ]
    spread = [
        ref_row(f"Jain's index, {s}, {len(draws)} draws of the bond: {q}", "", getattr(draws[s], f)(), TIMELY_JAIN[s])
        for s in SYSTEMS
        for q, f in (("lowest", "min"), ("median", "median"), ("highest", "max"))
    ]
    table = pd.DataFrame(
        [ref_row(f"Jain's index, {s}", "", jain[s], TIMELY_JAIN[s]) for s in SYSTEMS]
        + [ref_row(f"Jain's index over 1 ms windows, {s}", "", per_ms[s], TIMELY_JAIN[s]) for s in SYSTEMS]
        + spread
        + [ref_row(f"draws in which TIMELY is fairer than PFC (of {len(draws)})", "", fairer, None)]
        + [ref_row(f"Jain's index, {s}, {ONE}", "", one[s], TIMELY_JAIN[s]) for s in SYSTEMS]
        + [ref_row(f"connection {f}: mean throughput", "Mbps", stats.thr_mean[f], None) for f in shown]
    )
    discussion = (
        f"TIMELY's Jain index over the 40 connections is {jain['TIMELY']:.3f} (paper 0.953), PFC's "
        f"{jain['PFC']:.3f} (paper 0.909). What decides both is the server's 2x10G link: the presets "
        "bond two 10 Gbps ports and hash each connection onto one, as a link aggregation group does, "
        "so a port's connections share its 10 Gbps and the ports seldom carry 20 connections each. "
        "TIMELY's rates follow each port's own queue, so its index is about that of the draw's split; "
        "under PFC a client paused for the busier port stalls its connections to the other one too "
        "(head-of-line blocking), which spreads the shares further. Over "
        f"{len(draws)} draws (seeds, {sensitivity_plan(quick).measured_ms} ms each) TIMELY's index runs "
        f"{draws.TIMELY.min():.3f}–{draws.TIMELY.max():.3f} and PFC's {draws.PFC.min():.3f}–{draws.PFC.max():.3f}; "
        f"TIMELY is the fairer in {fairer} of them. With the server on one 20 Gbps link instead, nothing "
        f"tells the connections apart and both index near 1 ({one['TIMELY']:.3f} and {one['PFC']:.3f}): "
        "the switch serves its ingress ports round-robin and pauses them evenly, and each NIC serves "
        f"its queue pairs in turn. Over 1 ms windows the indices are {per_ms['TIMELY']:.3f} and "
        f"{per_ms['PFC']:.3f}. RTT is plotted per 1 ms (the mean of its completions' RTTs) and "
        "throughput over 5 ms windows, where the paper plots every completion."
    )
    return Outcome(
        figure=plot(d, stats, p.warmup_ms, sens[sens.server == BOND]),
        table=table,
        checks=checks,
        data={"connections": d, "jain": jain.reset_index(), "jain_by_draw": sens},
        discussion=discussion,
    )


register(
    Experiment(
        name="timely-fig13",
        group="timely",
        title="Fig. 13: four sample connections and fairness",
        paper=(
            "Four sample connections keep close to the 500 Mbps fair share with consistently low RTT; "
            "Jain's fairness index over connections is 0.953 for TIMELY and 0.909 for PFC."
        ),
        points=points,
        analyse=analyse,
    )
)
